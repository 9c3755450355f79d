package tool

import (
	"bytes"
	"context"
	"errors"
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

// gitignoreCase is one ignore file and the paths below its directory (a
// trailing '/' makes a directory), with the ones gitignore(5) says are
// ignored, themselves or through an ignored parent.
type gitignoreCase struct {
	name, ignore string
	paths        []string
	ignored      []string
}

var gitignoreCases = []gitignoreCase{
	{"comments and blank lines", "# a.txt\n\n   \n\\#b.txt\n", []string{"a.txt", "#b.txt", "# a.txt"}, []string{"#b.txt"}},
	{"trailing spaces trimmed unless escaped", "a.txt  \nb.txt\\ \nc\\  \n", []string{"a.txt", "a.txt ", "b.txt", "b.txt ", "c ", "c  "}, []string{"a.txt", "b.txt ", "c "}},
	{"escaped bang", "\\!x\n!y\n*.log\n!keep.log\n", []string{"!x", "x", "y", "a.log", "keep.log"}, []string{"!x", "a.log"}},
	{"negation cannot re-include below an excluded directory", "build/\n!build/keep.txt\n", []string{"build/keep.txt", "build/b.txt", "src/build/x"}, []string{"build", "build/keep.txt", "build/b.txt", "src/build", "src/build/x"}},
	{"re-included directory", "out/*\n!out/keep/\n", []string{"out/a", "out/keep/b", "out/keep/c/d"}, []string{"out/a"}},
	{"directory-only pattern skips files", "tmp/\n", []string{"tmp", "a/tmp/x"}, []string{"a/tmp", "a/tmp/x"}},
	{"a leading slash anchors", "/root.txt\n", []string{"root.txt", "sub/root.txt"}, []string{"root.txt"}},
	{"a middle slash anchors", "doc/frotz\n", []string{"doc/frotz", "a/doc/frotz"}, []string{"doc/frotz"}},
	{"a name without slash matches at any depth", "frotz\n", []string{"frotz", "a/frotz", "a/b/frotz/c"}, []string{"frotz", "a/frotz", "a/b/frotz", "a/b/frotz/c"}},
	{"leading double star", "**/foo\n", []string{"foo", "a/foo", "a/b/foo/x", "afoo"}, []string{"foo", "a/foo", "a/b/foo", "a/b/foo/x"}},
	{"trailing double star", "abc/**\n", []string{"abc/x", "abc/y/z", "xabc/y"}, []string{"abc/x", "abc/y", "abc/y/z"}},
	{"middle double star", "a/**/b\n", []string{"a/b", "a/x/b", "a/x/y/b", "a/xb"}, []string{"a/b", "a/x/b", "a/x/y/b"}},
	{"double star next to a name is a star", "a/x**b\n", []string{"a/xb", "a/xyb", "a/x/b"}, []string{"a/xb", "a/xyb"}},
	{"double star after the literal start spans directories", "a**/b\n", []string{"a/b", "a/x/b", "ax/b"}, []string{"a/b", "a/x/b", "ax/b"}},
	{"star and question mark stop at a slash", "a/*.c\nq/?\n", []string{"a/x.c", "a/b/x.c", "q/1", "q/12"}, []string{"a/x.c", "q/1"}},
	{"classes", "[a-c]1\n[!a-c]2\n[[:digit:]]3\n[]x]4\n", []string{"a1", "d1", "a2", "d2", "73", "x3", "]4", "x4", "y4"}, []string{"a1", "d2", "73", "]4", "x4"}},
	{"question mark matches one byte", "caf?\ncaf??x\n", []string{"café", "cafe", "caféx"}, []string{"cafe", "caféx"}},
	{"last match wins", "*.txt\n!a.txt\na.txt\n!b.txt\n", []string{"a.txt", "b.txt", "c.txt"}, []string{"a.txt", "c.txt"}},
	{"deeper files take precedence", "*.txt\n", []string{"sub/.gitignore", "sub/a.txt", "sub/b.txt", "c.txt"}, []string{"c.txt", "sub/b.txt"}},
	{"dotfiles are not special", "*\n!*.go\n!*/\n", []string{".env", "main.go", ".hidden/x.go", ".hidden/y"}, []string{".env", ".gitignore", ".hidden/y"}},
	{"classes on control bytes", "s[[:space:]]\nb[[:blank:]]\ng[[:graph:]]\nr[[:print:]]\nc[[:cntrl:]]\np[[:punct:]]\n",
		[]string{"s\t", "s\n", "s\r", "s ", "s\v", "s\f", "b\t", "b\v", "g~", "g ", "r ", "r\x7f", "c\x7f", "c\x1f", "c ", "p~", "p`", "p ", "pé"},
		[]string{"s\t", "s\n", "s\r", "s ", "b\t", "g~", "r ", "c\x7f", "c\x1f", "p~", "p`"}},
	{"a byte order mark starts the file", "\ufeffa.txt\r\nb.txt\r\n", []string{"a.txt", "b.txt", "c.txt"}, []string{"a.txt", "b.txt"}},
	{"malformed class and lone backslash match nothing", "[abc\n\\\nx[[:nope:]]\n", []string{"[abc", "a", "\\", "xa"}, nil},
}

// writeCase lays out c's paths and ignore file under dir; sub/.gitignore
// gets "!b.txt"-style content from the case "deeper files take precedence".
func writeCase(t testing.TB, dir string, c gitignoreCase) {
	t.Helper()
	for _, p := range c.paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		content := "x\n"
		if filepath.Base(p) == ".gitignore" {
			content = "!*.txt\nb.txt\n"
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(c.ignore), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGitignoreCasesMatchGit spells out gitignore(5) case by case: each
// case's expected verdicts are checked against git and against the walk.
func TestGitignoreCasesMatchGit(t *testing.T) {
	g := newGitOracle(t, t.TempDir())
	for i, c := range gitignoreCases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(g.top, fmt.Sprint("case", i))
			writeCase(t, dir, c)
			paths := treePaths(t, g.top, dir)
			verdicts := g.checkIgnore(t, paths)
			for _, p := range paths {
				rel := strings.TrimPrefix(p, fmt.Sprint("case", i, "/"))
				if want := slices.Contains(c.ignored, rel); verdicts[p].ignored != want {
					t.Errorf("git: %q ignored=%v (%s), the case says %v", rel, verdicts[p].ignored, verdicts[p].why, want)
				}
			}
			g.compareWalkWithGit(t, dir, verdicts, func(string) string { return fmt.Sprintf("  .gitignore: %q\n", c.ignore) })
		})
	}
}

// FuzzGitignoreMatchesGit checks random ignore files and paths against
// git: the walk must visit exactly the paths git does not ignore. Each
// input is laid out in a fresh directory of one repository per worker.
func FuzzGitignoreMatchesGit(f *testing.F) {
	for _, c := range gitignoreCases {
		f.Add(c.ignore, strings.Join(c.paths, "\n"))
	}
	g := newGitOracle(f, f.TempDir())
	n := 0
	f.Fuzz(func(t *testing.T, ignore, paths string) {
		if strings.Contains(ignore, "\x00") || len(ignore) > 4096 || len(paths) > 4096 {
			t.Skip()
		}
		c := gitignoreCase{ignore: ignore}
		for _, p := range strings.Split(paths, "\n") {
			var comps []string
			for _, comp := range strings.Split(p, "/") {
				if comp == "" || comp == "." || comp == ".." || comp == ".git" || strings.Contains(comp, "\x00") || len(comp) > 64 {
					continue
				}
				comps = append(comps, comp)
			}
			if len(comps) > 0 && len(comps) <= 6 && comps[0] != ".gitignore" {
				c.paths = append(c.paths, strings.Join(comps, "/"))
			}
		}
		n++
		dir := filepath.Join(g.top, fmt.Sprint("c", n))
		defer os.RemoveAll(dir)
		for _, p := range c.paths {
			// A path that is also another's directory cannot be laid out.
			full := filepath.Join(dir, filepath.FromSlash(p))
			if os.MkdirAll(filepath.Dir(full), 0o755) != nil {
				t.Skip()
			}
			if err := os.WriteFile(full, []byte("x\n"), 0o644); err != nil && !errors.Is(err, fs.ErrExist) && !isDirErr(full) {
				t.Skip()
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(ignore), 0o644); err != nil {
			t.Fatal(err)
		}
		paths2 := treePaths(t, g.top, dir)
		g.compareWalkWithGit(t, dir, g.checkIgnore(t, paths2), func(string) string { return fmt.Sprintf("  .gitignore: %q\n", ignore) })
	})
}

func isDirErr(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// git runs git in dir with the oracle's environment.
func (g *gitOracle) git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(g.env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestGitignoreLinkedWorktreeAndSymlinkedIgnoreFile checks two sources
// against git: a linked worktree (.git is a file) uses the info/exclude of
// the main repository, and a .gitignore that is a symbolic link is not
// read, neither below the walk root nor above it.
func TestGitignoreLinkedWorktreeAndSymlinkedIgnoreFile(t *testing.T) {
	g := newGitOracle(t, t.TempDir())
	g.git(t, g.top, "commit", "-q", "--allow-empty", "-m", "init")
	wt := filepath.Join(filepath.Dir(g.top), "wt")
	g.git(t, g.top, "worktree", "add", "-q", "-b", "side", wt)
	if err := os.WriteFile(filepath.Join(g.top, ".git", "info", "exclude"), []byte("*.secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"a.secret": "x", "b.txt": "x", "sub/c.secret": "x", "sub/d.log": "x",
		"rules": "*.log\n", "sub/deep/e.log": "x", "sub/deep/f.txt": "x",
	}
	for p, content := range files {
		full := filepath.Join(wt, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../rules", filepath.Join(wt, "sub", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	wg := &gitOracle{top: wt, env: g.env}
	paths := treePaths(t, wt, wt)
	verdicts := wg.checkIgnore(t, paths)
	if !verdicts["a.secret"].ignored || verdicts["sub/d.log"].ignored {
		t.Fatalf("git's verdicts are not what this test assumes: %v", verdicts)
	}
	describe := func(string) string { return "  info/exclude: *.secret; sub/.gitignore -> ../rules: *.log\n" }
	wg.compareWalkWithGit(t, wt, verdicts, describe)
	wg.compareWalkWithGit(t, filepath.Join(wt, "sub", "deep"), verdicts, describe)
}

// TestGitignoreClassesMatchGitOnEveryByte checks every character class,
// '?' and a few byte ranges against git for each byte a file name can hold.
func TestGitignoreClassesMatchGitOnEveryByte(t *testing.T) {
	g := newGitOracle(t, t.TempDir())
	globs := []string{"?", "[!a]", "[^[:alpha:]]", "[\x80-\xff]", "[ -~]", "[\x01-\x1f]", "[]-\x7f]", "\\\xe9"}
	for _, class := range []string{"alnum", "alpha", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper", "xdigit"} {
		globs = append(globs, "[[:"+class+":]]")
	}
	for i, glob := range globs {
		dir := filepath.Join(g.top, fmt.Sprint("g", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("x"+glob+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for c := 1; c < 256; c++ {
			if c == '/' {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, "x"+string([]byte{byte(c)})), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	paths := treePaths(t, g.top, g.top)
	verdicts := g.checkIgnore(t, paths)
	g.compareWalkWithGit(t, g.top, verdicts, func(p string) string {
		var i int
		fmt.Sscanf(p, "g%d", &i)
		return fmt.Sprintf("  .gitignore: %q\n", "x"+globs[i])
	})
}

// TestGitignoreDenseGlobsMatchGit checks short random patterns over a small
// alphabet dense in stars, brackets, escapes and slashes, each in its own
// directory holding the same three-level tree of short names, against git.
func TestGitignoreDenseGlobsMatchGit(t *testing.T) {
	g := newGitOracle(t, t.TempDir())
	rng := rand.New(rand.NewPCG(7, 7))
	alphabet := []string{"a", "b", "/", "*", "*", "?", "[", "]", "!", "^", "\\", "-", "**", "[:alpha:]", "/**/"}
	names := []string{"a", "b", "ab", "ba", "]", "-"}
	var mk func(dir string, depth int)
	mk = func(dir string, depth int) {
		for _, n := range names {
			p := filepath.Join(dir, n)
			if depth < 2 && n != "-" {
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				mk(p, depth+1)
			} else if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var patterns []string
	for i := range 60 {
		var p strings.Builder
		for range 1 + rng.IntN(6) {
			p.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		patterns = append(patterns, p.String())
		dir := filepath.Join(g.top, fmt.Sprint("d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mk(dir, 0)
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(p.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	verdicts := g.checkIgnore(t, treePaths(t, g.top, g.top))
	g.compareWalkWithGit(t, g.top, verdicts, func(p string) string {
		var i int
		fmt.Sscanf(p, "d%d", &i)
		return fmt.Sprintf("  .gitignore: %q\n", patterns[i])
	})
}
