package prompt

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/commands"
	"github.com/corvid-agent/corvid/internal/config"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// isolateGit keeps the user's and the system's git config out of a test
// and stops git from finding a repository above dir's parent.
func isolateGit(t *testing.T, dir string) {
	t.Helper()
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
}

func haveGit() bool { _, err := exec.LookPath("git"); return err == nil }

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// initRepo makes dir a repository on branch trunk: a real one when git is
// installed, else just a .git folder (enough to mark the root).
func initRepo(t *testing.T, dir string) {
	t.Helper()
	if !haveGit() {
		writeFiles(t, dir, map[string]string{".git/HEAD": "ref: refs/heads/trunk\n"})
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "symbolic-ref", "HEAD", "refs/heads/trunk")
}

// layout is a repository with AGENTS.md at every level, one above it that
// must be ignored, and a user global one.
func layout(t *testing.T) (cwd string, env config.Env, top string) {
	t.Helper()
	top = t.TempDir()
	isolateGit(t, top)
	initRepo(t, filepath.Join(top, "repo"))
	writeFiles(t, top, map[string]string{
		"AGENTS.md":            "ABOVE THE REPOSITORY\n",
		"xdg/corvid/AGENTS.md": "GLOBAL RULES\n",
		"repo/AGENTS.md":       "ROOT RULES\n",
		"repo/a/AGENTS.md":     "MIDDLE RULES\n",
		"repo/a/b/AGENTS.md":   "\n  LEAF RULES  \n",
		"repo/a/c/AGENTS.md":   "SIBLING RULES\n",
	})
	return filepath.Join(top, "repo", "a", "b"), config.MapEnv{"XDG_CONFIG_HOME": filepath.Join(top, "xdg")}, top
}

func fixedNow() time.Time { return time.Date(2026, 3, 2, 15, 4, 5, 0, time.UTC) }

func TestBuildOrdersInstructionsFromGlobalToCwd(t *testing.T) {
	cwd, env, top := layout(t)
	got := Build(Options{Cwd: cwd, Env: env, Now: fixedNow})

	if !strings.HasPrefix(got, DefaultBase) {
		t.Errorf("prompt does not start with DefaultBase when Base is empty")
	}
	last := -1
	for _, want := range []string{
		"# Project instructions",
		"## " + filepath.Join(top, "xdg", "corvid", "AGENTS.md") + "\n\nGLOBAL RULES\n",
		"## " + filepath.Join(top, "repo", "AGENTS.md") + "\n\nROOT RULES\n",
		"## " + filepath.Join(top, "repo", "a", "AGENTS.md") + "\n\nMIDDLE RULES\n",
		"## " + filepath.Join(top, "repo", "a", "b", "AGENTS.md") + "\n\nLEAF RULES\n",
		"<env>",
	} {
		i := strings.Index(got, want)
		if i < 0 {
			t.Fatalf("prompt lacks %q:\n%s", want, got)
		}
		if i < last {
			t.Errorf("%q is out of order:\n%s", want, got)
		}
		last = i
	}
	for _, absent := range []string{"ABOVE THE REPOSITORY", "SIBLING RULES", "# Skills"} {
		if strings.Contains(got, absent) {
			t.Errorf("prompt contains %q:\n%s", absent, got)
		}
	}
}

func TestSystemReplacesBaseButKeepsProjectInstructions(t *testing.T) {
	cwd, env, _ := layout(t)
	got := Build(Options{Base: "You are a terse pirate.", Cwd: cwd, Env: env, Now: fixedNow})
	if !strings.HasPrefix(got, "You are a terse pirate.\n") {
		t.Errorf("prompt does not start with the --system text:\n%s", got)
	}
	if strings.Contains(got, "You are corvid") {
		t.Errorf("the default base is still present:\n%s", got)
	}
	for _, want := range []string{"GLOBAL RULES", "ROOT RULES", "LEAF RULES", "<env>"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
}

func TestNoProjectInstructionsDropsEveryAgentsFile(t *testing.T) {
	cwd, env, _ := layout(t)
	got := Build(Options{Base: "Base.", Cwd: cwd, Env: env, Now: fixedNow, NoProjectInstructions: true})
	for _, absent := range []string{"# Project instructions", "GLOBAL RULES", "ROOT RULES", "LEAF RULES"} {
		if strings.Contains(got, absent) {
			t.Errorf("prompt contains %q:\n%s", absent, got)
		}
	}
	if !strings.Contains(got, "<env>") {
		t.Errorf("the env block is gone too:\n%s", got)
	}
}

func TestInstructionsOutsideARepositoryAreCwdAndGlobalOnly(t *testing.T) {
	top := t.TempDir()
	writeFiles(t, top, map[string]string{"AGENTS.md": "parent", "w/AGENTS.md": "here", "cfg/AGENTS.md": "global"})
	env := config.MapEnv{"CORVID_HOME": top} // ConfigDir = top/config: no file there
	got := InstructionFiles(filepath.Join(top, "w"), env)
	if len(got) != 1 || got[0] != filepath.Join(top, "w", "AGENTS.md") {
		t.Errorf("InstructionFiles = %q", got)
	}
	if got := InstructionFiles(filepath.Join(top, "w"), nil); len(got) != 1 {
		t.Errorf("with a nil Env: %q", got)
	}
}

func TestHugeInstructionsAreCut(t *testing.T) {
	top := t.TempDir()
	writeFiles(t, top, map[string]string{"AGENTS.md": strings.Repeat("é", maxInstructions)})
	got := Build(Options{Base: "B", Cwd: top, Env: config.MapEnv{"XDG_CONFIG_HOME": filepath.Join(top, "none")}, Now: fixedNow})
	if !strings.Contains(got, "[… cut: the file is larger than 64 KiB") || len(got) > maxInstructions+4096 {
		t.Errorf("huge AGENTS.md not cut (prompt is %d bytes)", len(got))
	}
	if !strings.Contains(got, "é") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("cut left invalid UTF-8")
	}
}

func TestEnvBlockNamesOSDateCwdAndGit(t *testing.T) {
	top := t.TempDir()
	isolateGit(t, top)
	cwd := filepath.Join(top, "proj")
	initRepo(t, cwd)
	want := "Git: branch trunk, 1 modified, 1 untracked"
	if haveGit() {
		writeFiles(t, cwd, map[string]string{"tracked.txt": "v1\n"})
		git(t, cwd, "add", "tracked.txt")
		git(t, cwd, "commit", "-q", "-m", "first")
		writeFiles(t, cwd, map[string]string{"tracked.txt": "v2\n", "new.txt": "new\n"})
	} else {
		want = "Git: git is not installed"
	}
	got := Build(Options{Base: "B", Cwd: cwd, Env: config.MapEnv{"XDG_CONFIG_HOME": filepath.Join(top, "none")}, Now: fixedNow})
	block := got[strings.Index(got, "<env>"):]
	for _, w := range []string{
		"OS: " + runtime.GOOS + "/" + runtime.GOARCH + "\n",
		"Date: 2026-03-02 (Monday)\n",
		"Working directory: " + cwd + "\n",
		want + "\n</env>",
	} {
		if !strings.Contains(block, w) {
			t.Errorf("env block lacks %q:\n%s", w, block)
		}
	}
}

func TestSkillsAreListedWithHowToLoadThem(t *testing.T) {
	top := t.TempDir()
	got := Build(Options{Base: "B", Cwd: top, Env: config.MapEnv{"XDG_CONFIG_HOME": top}, Now: fixedNow, Skills: []commands.Skill{
		{Name: "pdf", Description: "Work with\n  PDF files"},
		{Name: "bare"},
	}})
	i := strings.Index(got, "# Skills")
	if i < 0 || i < strings.Index(got, "</env>") {
		t.Fatalf("no skills section after the env block:\n%s", got)
	}
	for _, w := range []string{"skill tool", `{"name": "NAME"}`, "- pdf: Work with PDF files\n", "- bare\n"} {
		if !strings.Contains(got[i:], w) {
			t.Errorf("skills section lacks %q:\n%s", w, got[i:])
		}
	}
}

// A CLAUDE.md that links to AGENTS.md, or repeats it, is read once.
func TestMemoryFileLinkedOrCopiedIsReadOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("Use tabs.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("AGENTS.md", filepath.Join(dir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "GEMINI.md"), []byte("Use tabs.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := Build(Options{Cwd: dir, Env: config.MapEnv{"CORVID_HOME": t.TempDir()}})
	if n := strings.Count(out, "Use tabs."); n != 1 {
		t.Errorf("the instructions appear %d times, want once:\n%s", n, out)
	}
}
