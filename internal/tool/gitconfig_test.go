package tool

import (
	"context"
	"io/fs"
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
		{name: "includeIf gitdir", files: map[string]string{
			"~/.gitconfig":     "[includeIf \"gitdir:~/repo/\"]\n\tpath = ~/repo.conf\n",
			"~/repo.conf":      "[core]\n\texcludesFile = ~/repo-list\n",
			"~/repo-list":      "*.log\n",
			"~/xdg/git/ignore": "*.tmp\n",
		}},
		{name: "per-worktree config", files: map[string]string{
			"repo/.git/config+":         "[extensions]\n\tworktreeConfig = true\n",
			"repo/.git/config.worktree": "[core]\n\texcludesFile = ~/wt-list\n",
			"~/wt-list":                 "*.log\n",
			"~/xdg/git/ignore":          "*.tmp\n",
		}},
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

// Without git on PATH a walk still works, with git's default global ignore
// file.
func TestWalkWithoutGitUsesTheDefaultExcludesFile(t *testing.T) {
	home := gitEnvOnly(t)
	top := filepath.Join(home, "repo")
	if out, err := exec.Command("git", "init", "-q", top).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(home, "xdg", "git", "ignore"), "*.log\n")
	writeFile(t, filepath.Join(top, "a.log"), "x")
	writeFile(t, filepath.Join(top, "a.txt"), "x")
	t.Setenv("PATH", t.TempDir())
	var got []string
	err := walkTree(context.Background(), top, walkOptions{ignore: true, maxDepth: 1}, func(_, rel string, d fs.DirEntry) bool {
		got = append(got, rel)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("walk lists %q, want [a.txt]: a.log is in the default ignore file", got)
	}
}
