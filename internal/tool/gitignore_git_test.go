package tool

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// These tests hold corvid's gitignore matcher (gitignore.go, through the
// walk that the grep, glob and ls tools share) to real git: for every path
// of a generated repository, the walk visits it exactly when
// `git check-ignore` says neither it nor a parent directory is ignored.

// gitOracle is a scratch repository that git reads no configuration into:
// no global or system config, no global excludes file.
type gitOracle struct {
	top string
	env []string
}

func newGitOracle(t testing.TB, top string) *gitOracle {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed; the gitignore oracle tests need it")
	}
	home := filepath.Join(top, ".git-home")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	g := &gitOracle{top: filepath.Join(top, "repo"), env: env}
	if err := os.MkdirAll(g.top, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", g.top)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return g
}

// gitVerdict is git's answer for one path: the pattern that decides it
// ("" for none) and where it comes from.
type gitVerdict struct {
	ignored bool
	why     string // "source:line:pattern"
}

// checkIgnore asks `git check-ignore --no-index -v -n` about every path
// (slash-separated, relative to the top) in one call.
func (g *gitOracle) checkIgnore(t testing.TB, paths []string) map[string]gitVerdict {
	t.Helper()
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	cmd := exec.Command("git", "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = g.top, g.env, &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
		t.Fatalf("git check-ignore: %v\n%s", err, stderr.Bytes())
	}
	fields := strings.Split(string(out), "\x00")
	if len(fields)%4 != 1 || fields[len(fields)-1] != "" {
		t.Fatalf("git check-ignore -z printed %d fields", len(fields))
	}
	res := map[string]gitVerdict{}
	for i := 0; i+4 <= len(fields); i += 4 {
		source, line, pattern, path := fields[i], fields[i+1], fields[i+2], fields[i+3]
		v := gitVerdict{}
		if pattern != "" {
			v.ignored = !strings.HasPrefix(pattern, "!")
			v.why = source + ":" + line + ":" + pattern
		}
		res[path] = v
	}
	if len(res) != len(paths) {
		t.Fatalf("git check-ignore answered for %d of %d paths", len(res), len(paths))
	}
	return res
}

// treePaths lists every path below root (slash-separated, relative to top)
// except .git.
func treePaths(t testing.TB, top, root string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a linked worktree's .git file
		}
		if p != root {
			rel, _ := filepath.Rel(top, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// compareWalkWithGit walks root (the top or a directory below it) as the
// search tools do and compares what it visits with git's verdicts.
func (g *gitOracle) compareWalkWithGit(t testing.TB, root string, verdicts map[string]gitVerdict, describe func(string) string) {
	t.Helper()
	prefix, _ := filepath.Rel(g.top, root)
	prefix = filepath.ToSlash(prefix)
	if prefix == "." {
		prefix = ""
	} else {
		prefix += "/"
	}
	visited := map[string]bool{}
	var mu = make(chan struct{}, 1)
	err := walkTree(context.Background(), root, walkOptions{ignore: true}, func(_, rel string, _ fs.DirEntry) bool {
		mu <- struct{}{}
		visited[prefix+rel] = true
		<-mu
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	failures := 0
	for _, p := range treePaths(t, g.top, root) {
		v, ok := verdicts[p]
		if !ok {
			t.Fatalf("no git verdict for %q", p)
		}
		if visited[p] == !v.ignored {
			continue
		}
		failures++
		if failures > 10 {
			t.Errorf("... more mismatches")
			return
		}
		ignores := ""
		if failures == 1 {
			ignores = "\n" + describe(p)
		}
		if v.ignored {
			t.Errorf("walk from %q visits %q; git ignores it by %q%s", prefix, p, v.why, ignores)
		} else {
			t.Errorf("walk from %q skips %q; git does not ignore it (%q)%s", prefix, p, v.why, ignores)
		}
	}
}

// Names for generated files and directories: dotfiles, spaces, glob
// characters, escapes, non-ASCII and control bytes, so that every class
// and escape has something to match and something to miss.
var giNames = []string{
	"a", "b", "c", "ab", "abc", "foo", "Foo", "FOO", "bar", "baz", "foo.log", "x.txt", "a.b.c",
	"build", "out", "node_modules", ".hidden", ".env", "café", "naïve", "日本語", "ü",
	"a b", "a ", " a", "[x]", "*", "q?", "#h", "!b", `a\b`, "x\tz", "-", "]", "a[b",
	"\x7f", "v\x0b", "f\x0c", "r\r", "1", "9z", "_u", "a~", "{x}", "%", "é.log", "tmp", "x.tmp",
}

// giAtoms are pattern components: names, globs, classes (valid, odd and
// malformed), escapes and the forms of "**".
var giAtoms = []string{
	"*", "?", "**", "***", "[a-c]", "[!a]", "[^ab]", "[]a]", "[a-]", `[\]]`, "[]-a]", "[!]]",
	"[[:alpha:]]", "[[:space:]]", "[[:punct:]]", "[[:upper:]]", "[[:digit:]]*", "[[:xdigit:]]",
	"[[:cntrl:]]", "[[:print:]]", "[[:graph:]]", "[[:blank:]]", "[[:lower:]]*", "[[:alnum:]]",
	"[[:bogus:]]", "[", "[a", "[[:alpha:]", "[:alpha:]", "[[:]]", "[a-c[:digit:]]", "[z-a]",
	"a*", "*o", "f*o", "*.log", "*.*", `\*`, `\?`, "??", "?*", "caf?", "caf??", "caf[^a-z]*",
	"日*", "*語", `\#h`, `\!b`, `a\ `, `\ a`, `\a`, `a\\b`, "*.tmp", "x.*", "[fF]oo", "F*",
	"[é]*", "[^é]", "na?ve", "na??ve", "b*/", "[.]*", ".*", "*[!a-z]",
}

// giPattern makes one line of an ignore file. A pattern of one component
// always holds part of a name, so that few patterns ignore everything.
func giPattern(rng *rand.Rand) string {
	switch rng.IntN(40) {
	case 0:
		return "#" + giNames[rng.IntN(len(giNames))]
	case 1:
		return []string{"", "   ", "\t", "!", "/", "//", "**/", "/**", "!**", "!*/", "\\", "#"}[rng.IntN(12)]
	}
	name := func() string { return giNames[rng.IntN(len(giNames))] }
	atom := func() string { return giAtoms[rng.IntN(len(giAtoms))] }
	var b strings.Builder
	if rng.IntN(3) == 0 {
		b.WriteString("!")
	}
	if rng.IntN(5) == 0 {
		b.WriteString("/")
	}
	n := 1 + rng.IntN(3)
	named := false // a component so far holds a whole name
	for i := range n {
		if i > 0 {
			b.WriteString("/")
		}
		switch k := rng.IntN(6); {
		case k == 0 && (i < n-1 || named):
			b.WriteString(atom())
		case k == 1 && (i < n-1 || named):
			b.WriteString("**")
		case k <= 2:
			b.WriteString(name())
			named = true
		case k == 3:
			b.WriteString(name()[:1] + atom())
		case k == 4:
			b.WriteString(atom() + name())
		default:
			nm := name()
			b.WriteString(nm[:len(nm)/2] + atom() + nm[len(nm)/2:])
			named = len(nm) > 2
		}
	}
	switch rng.IntN(8) {
	case 0:
		b.WriteString("/")
	case 1:
		b.WriteString("  ")
	case 2:
		b.WriteString(`\ `)
	case 3:
		b.WriteString("/ ")
	}
	return b.String()
}

// giRepo is one generated repository.
type giRepo struct {
	g       *gitOracle
	ignores map[string]string // ignore file (relative to top) → content
	dirs    []string          // every directory below the top, relative
}

// generateGitignoreRepo lays out a tree of files, directories and symbolic
// links three levels deep with a .gitignore in most directories and an
// info/exclude.
func generateGitignoreRepo(t *testing.T, seed uint64) *giRepo {
	rng := rand.New(rand.NewPCG(seed, 18))
	r := &giRepo{g: newGitOracle(t, t.TempDir()), ignores: map[string]string{}}
	writeIgnore := func(rel string, n int) {
		var b strings.Builder
		for range n {
			b.WriteString(giPattern(rng))
			if rng.IntN(10) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		if err := os.WriteFile(filepath.Join(r.g.top, filepath.FromSlash(rel)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		r.ignores[rel] = b.String()
	}
	var fill func(rel string, depth int)
	fill = func(rel string, depth int) {
		dir := filepath.Join(r.g.top, filepath.FromSlash(rel))
		prefix := ""
		if rel != "" {
			prefix = rel + "/"
		}
		n := 4 + rng.IntN(8)
		if depth == 0 {
			n = 24
		}
		for _, i := range rng.Perm(len(giNames))[:n] {
			name := giNames[i]
			p := filepath.Join(dir, name)
			switch k := rng.IntN(10); {
			case depth < 3 && k < 4:
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				r.dirs = append(r.dirs, prefix+name)
				fill(prefix+name, depth+1)
			case k == 4:
				if err := os.Symlink("..", p); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if depth == 0 {
			writeIgnore(".gitignore", 40)
		} else if rng.IntN(3) > 0 {
			writeIgnore(prefix+".gitignore", 1+rng.IntN(8))
		}
	}
	fill("", 0)
	if err := os.MkdirAll(filepath.Join(r.g.top, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeIgnore(".git/info/exclude", 6)
	return r
}

// describe lists the ignore files that apply to p, for a failure message.
func (r *giRepo) describe(p string) string {
	var b strings.Builder
	keys := make([]string, 0, len(r.ignores))
	for k := range r.ignores {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		dir := strings.TrimSuffix(k, ".gitignore")
		if k == ".git/info/exclude" || strings.HasPrefix(p, dir) {
			fmt.Fprintf(&b, "  %s: %q\n", k, r.ignores[k])
		}
	}
	return b.String()
}

// TestGitignoreMatchesGit generates repositories with nested .gitignore
// files and an info/exclude full of negations, anchored and directory-only
// patterns, "**", classes, escapes, trailing spaces and CRLF lines, and
// checks that a walk from the top and from every directory git does not
// ignore visits exactly the paths git does not ignore.
func TestGitignoreMatchesGit(t *testing.T) {
	tested := 0
	for seed := uint64(0); tested < 8; seed++ {
		if seed == 40 {
			t.Fatalf("only %d of 40 generated repositories ignore between 5%% and 95%% of their paths", tested)
		}
		r := generateGitignoreRepo(t, seed)
		paths := treePaths(t, r.g.top, r.g.top)
		verdicts := r.g.checkIgnore(t, paths)
		ignored := 0
		for _, v := range verdicts {
			if v.ignored {
				ignored++
			}
		}
		// A repository that ignores (almost) everything or nothing proves
		// little; the generator makes another.
		if ignored < len(paths)/20 || ignored > len(paths)*19/20 {
			continue
		}
		tested++
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Logf("%d paths, %d ignored by git, %d directories", len(paths), ignored, len(r.dirs))
			r.g.compareWalkWithGit(t, r.g.top, verdicts, r.describe)
			for _, d := range r.dirs {
				if !verdicts[d].ignored && !t.Failed() {
					r.g.compareWalkWithGit(t, filepath.Join(r.g.top, filepath.FromSlash(d)), verdicts, r.describe)
				}
			}
		})
	}
}
