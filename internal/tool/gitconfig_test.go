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

// gitEnvOnly sets the environment that both corvid and git read for their
// config: HOME and XDG_CONFIG_HOME in a temporary directory, no system
// file, no GIT_* variable from the caller. It returns HOME.
func gitEnvOnly(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed; the git config oracle tests need it")
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return home
}

// gitListConfig is `git config --file f --includes --list -z`: every
// variable as "name\x00" (no value) or "name\nvalue\x00", or ok false when
// git refuses the file.
func gitListConfig(t *testing.T, file string) (entries []gitConfigEntry, ok bool) {
	t.Helper()
	out, err := exec.Command("git", "config", "--file", file, "--includes", "--list", "-z").Output()
	if err != nil {
		if _, exit := err.(*exec.ExitError); exit {
			return nil, false
		}
		t.Fatal(err)
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		name, value, has := bytes.Cut(rec, []byte{'\n'})
		entries = append(entries, gitConfigEntry{name: string(name), value: string(value), hasValue: has})
	}
	return entries, true
}

// Pieces of config files: headers of every form (some refused by git),
// keys in mixed case (some refused), separators, and value pieces with
// quotes, escapes (some refused), comments, blanks and continuations.
var (
	gcHeaders = []string{"[core]", "[Core]", "[CORE]", "[core \"x\"]", "[core \"Sub\\\"q\"]", "[core.sub]",
		"[core.]", "[core  \"\"]", "[include]", "[a-b.c-d]", "\t[core] ",
		"[ core]", "[core", "[]", "[co re]", "[core \"a\" ]"}
	gcKeys = []string{"excludesFile", "excludesfile", "EXCLUDESFILE", "ExcludesFile", "path",
		"other-key", "k2", "9k", "ex_cl"}
	gcSeps   = []string{" = ", "=", "\t=\t", " =", "= ", "", " ", " ; c", " #c"}
	gcValues = []string{"plain", "two  words", "tab\tin", "\"quoted ; not # comment\"", "a\"b\"c", "\\t",
		"\\n", "\\\"", "\\\\", "~/ignore", "~", "~user/x", "%(prefix)/x", "rel/path", "/abs/path",
		"é.txt", " ;comment", " # comment", "\\\n", "\\\r\n", "\r", "\v", "\f", "\"\"", "  ", "x ",
		"\" a \"", "\\x", "\"open"}
)

// gcFile makes a random config file of a few lines, most of them valid.
func gcFile(rng *rand.Rand) string {
	pick := func(list []string, valid int) string {
		if rng.IntN(10) == 0 {
			return list[rng.IntN(len(list))]
		}
		return list[rng.IntN(valid)]
	}
	var b strings.Builder
	for range 1 + rng.IntN(6) {
		switch rng.IntN(8) {
		case 0:
			b.WriteString("# a comment line")
		case 1:
			b.WriteString(pick(gcHeaders, 11))
		case 2:
			b.WriteString("")
		default:
			if rng.IntN(3) == 0 {
				b.WriteString(" \t")
			}
			b.WriteString(pick(gcKeys, 7))
			b.WriteString(pick(gcSeps, 5))
			for range rng.IntN(4) {
				b.WriteString(pick(gcValues, len(gcValues)-2))
			}
		}
		if rng.IntN(6) == 0 {
			b.WriteString("\r\n")
		} else if rng.IntN(15) > 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

func TestGitConfigParserMatchesGit(t *testing.T) {
	gitEnvOnly(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "config")
	seen := map[bool]int{}
	for seed := range uint64(250) {
		rng := rand.New(rand.NewPCG(seed, 17))
		text := "[core]\n" + gcFile(rng)
		if seed%3 == 0 {
			text = gcFile(rng)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		want, ok := gitListConfig(t, file)
		seen[ok]++
		var got []gitConfigEntry
		err := parseGitConfig([]byte(text), func(e gitConfigEntry) { got = append(got, e) })
		if (err == nil) != ok {
			t.Errorf("seed %d: parse error %v, git accepts the file: %v\n%q", seed, err, ok, text)
			continue
		}
		if ok && !slices.Equal(got, want) {
			t.Errorf("seed %d: parsed %q\ngit lists %q\nfile %q", seed, fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want), text)
		}
	}
	// The generator must exercise both sides.
	if seen[true] < 100 || seen[false] < 25 {
		t.Fatalf("files git accepted/refused: %d/%d; the generator no longer covers both", seen[true], seen[false])
	}
}

// gitIgnoreSetup is one arrangement of git's ignore sources; files are
// written relative to HOME ("~/...") or the repository ("repo/...").
type gitIgnoreSetup struct {
	name  string
	files map[string]string
	env   map[string]string
	// none: git ignores nothing here, though an ignore file that another
	// reading of the config would use exists.
	none bool
}

func TestGlobalExcludesFileMatchesGit(t *testing.T) {
	setups := []gitIgnoreSetup{
		{name: "default XDG file", files: map[string]string{"~/xdg/git/ignore": "*.log\n!keep.log\nbuild/\n"}},
		{name: "no XDG_CONFIG_HOME: ~/.config/git/ignore", env: map[string]string{"XDG_CONFIG_HOME": ""},
			files: map[string]string{"~/.config/git/ignore": "*.tmp\n", "~/xdg/git/ignore": "*.log\n"}},
		{name: "~/.gitconfig names a file with ~", files: map[string]string{
			"~/.gitconfig":      "[user]\n\tname = x\n[Core]\n\tExcludesFile = \"~/my ignore\" ; mine\n",
			"~/my ignore":       "*.log\n",
			"~/xdg/git/ignore":  "*.tmp\n",
			"repo/.gitignore":   "!keep.log\n",
			"repo/sub/keep.log": "",
		}},
		{name: "XDG config, then ~/.gitconfig wins", files: map[string]string{
			"~/xdg/git/config": "[core]\nexcludesfile = ~/a\n",
			"~/.gitconfig":     "[core]\nexcludesfile = ~/b\n",
			"~/a":              "*.log\n",
			"~/b":              "*.tmp\n",
		}},
		{name: "repository config wins, relative path from the top", files: map[string]string{
			"~/.gitconfig":       "[core]\nexcludesfile = ~/a\n",
			"~/a":                "*.log\n",
			"repo/.git/config+":  "[core]\n\texcludesFile = ignores/list\n",
			"repo/ignores/list":  "*.tmp\nsub/\n",
			"repo/ignores/x.log": "",
		}},
		{name: "info/exclude and .gitignore override it", files: map[string]string{
			"~/xdg/git/ignore":       "*.log\n*.tmp\nbuild/\n",
			"repo/.git/info/exclude": "!a.log\n",
			"repo/sub/.gitignore":    "!*.tmp\n",
		}},
		{name: "include.path", files: map[string]string{
			"~/.gitconfig":    "[include]\n\tpath = inc/more.conf\n",
			"~/inc/more.conf": "[core]\n\texcludesFile = ~/inc/list\n",
			"~/inc/list":      "*.log\n",
		}},
		{name: "empty value turns it off", none: true, files: map[string]string{
			"~/.gitconfig":     "[core]\nexcludesfile =\n",
			"~/xdg/git/ignore": "*.log\n",
		}},
		{name: "GIT_CONFIG_COUNT", env: map[string]string{"GIT_CONFIG_COUNT": "1",
			"GIT_CONFIG_KEY_0": "core.excludesFile", "GIT_CONFIG_VALUE_0": "~/env-list"},
			files: map[string]string{"~/env-list": "*.tmp\n", "~/xdg/git/ignore": "*.log\n"}},
		{name: "GIT_CONFIG_GLOBAL", env: map[string]string{"GIT_CONFIG_GLOBAL": "~/other.conf"},
			files: map[string]string{"~/other.conf": "[core]\nexcludesfile=~/g\n", "~/g": "*.log\n",
				"~/.gitconfig": "[core]\nexcludesfile=~/h\n", "~/h": "*.tmp\n"}},
		{name: "subsection is another key", none: true, files: map[string]string{
			"~/.gitconfig": "[core \"x\"]\nexcludesfile = ~/g\n[core.y]\nexcludesfile = ~/g\n",
			"~/g":          "*.log\n",
		}},
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			home := gitEnvOnly(t)
			for k, v := range s.env {
				t.Setenv(k, strings.Replace(v, "~", home, 1))
			}
			top := filepath.Join(home, "repo")
			if out, err := exec.Command("git", "init", "-q", top).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			for _, f := range []string{"a.log", "keep.log", "x.tmp", "a.txt", "sub/b.log", "sub/c.tmp",
				"sub/d.go", "build/e.go", "sub/build/f.go"} {
				writeFile(t, filepath.Join(top, f), "x")
			}
			for name, text := range s.files {
				path := filepath.Join(home, strings.TrimPrefix(name, "~/"))
				if rest, ok := strings.CutPrefix(name, "repo/"); ok {
					path = filepath.Join(top, rest)
				}
				if p, ok := strings.CutSuffix(path, "+"); ok { // append to a file git wrote
					old, _ := os.ReadFile(p)
					path, text = p, string(old)+text
				}
				writeFile(t, path, text)
			}
			cmd := exec.Command("git", "-C", top, "ls-files", "--others", "--exclude-standard", "-z")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("git ls-files: %v", err)
			}
			var want []string
			for _, p := range strings.Split(string(out), "\x00") {
				if p != "" {
					want = append(want, p)
				}
			}
			var got []string
			var mu = make(chan struct{}, 1)
			err = walkTree(context.Background(), top, walkOptions{ignore: true}, func(_, rel string, d fs.DirEntry) bool {
				if !d.IsDir() {
					mu <- struct{}{}
					got = append(got, filepath.ToSlash(rel))
					<-mu
				}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("walk lists %q\ngit lists  %q", got, want)
			}
			// Every setup ignores something, so a walk that reads no
			// ignore source fails above.
			written := 9
			for name := range s.files {
				if strings.HasPrefix(name, "repo/") && !strings.HasPrefix(name, "repo/.git/") {
					written++
				}
			}
			if s.none != (len(want) >= written) {
				t.Errorf("git lists %d of the %d files written; the setup expects it to ignore some: %v", len(want), written, !s.none)
			}
		})
	}
}
