package tool

import (
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

// Hand-written gitignore(5) cases, every byte against the classes, dense
// random globs, linked worktrees and the fuzz target, all checked against
// git with the oracle of gitignore_git_test.go.

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
