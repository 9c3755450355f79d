package prompt

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGitSummaryWithoutGitSaysSo(t *testing.T) {
	old := gitCommand
	gitCommand = "corvid-test-no-such-git"
	t.Cleanup(func() { gitCommand = old })
	if got := GitSummary(t.TempDir()); got != "git is not installed" {
		t.Errorf("GitSummary = %q", got)
	}
}

func TestGitSummaryOutsideARepository(t *testing.T) {
	if !haveGit() {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	isolateGit(t, dir)
	if got := GitSummary(dir); got != "not a git repository" {
		t.Errorf("GitSummary = %q", got)
	}
}

func TestGitSummaryOfAFreshAndACleanRepository(t *testing.T) {
	if !haveGit() {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	isolateGit(t, dir)
	initRepo(t, dir)
	if got, want := GitSummary(dir), "branch trunk (no commits yet), clean"; got != want {
		t.Errorf("fresh repository: GitSummary = %q, want %q", got, want)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	if got, want := GitSummary(dir), "branch trunk (no commits yet), 0 modified, 2 untracked"; got != want {
		t.Errorf("untracked files: GitSummary = %q, want %q", got, want)
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "c")
	if got, want := GitSummary(filepath.Join(dir, "sub")), "branch trunk, clean"; got != want {
		t.Errorf("clean, from a subfolder: GitSummary = %q, want %q", got, want)
	}
	git(t, dir, "checkout", "-q", "--detach")
	if got, want := GitSummary(dir), "detached HEAD, clean"; got != want {
		t.Errorf("detached: GitSummary = %q, want %q", got, want)
	}
}

func TestSummarizeStatus(t *testing.T) {
	for in, want := range map[string]string{
		"## main...origin/main [ahead 1, behind 2]\n M a\nM  b\nR  c -> d\n?? e\n": "branch main (ahead 1, behind 2), 3 modified, 1 untracked",
		"## feature/x...origin/feature/x [gone]\n":                                 "branch feature/x (gone), clean",
		"## main\n":                          "branch main, clean",
		"## HEAD (no branch)\nUU conflict\n": "detached HEAD, 1 modified, 0 untracked",
		"## Initial commit on master\n":      "branch master (no commits yet), clean",
		"":                                   "unknown branch, clean",
	} {
		if got := summarizeStatus(in); got != want {
			t.Errorf("summarizeStatus(%q) = %q, want %q", in, got, want)
		}
	}
}

// A workspace can come with its own .git/config (an archive, a copied
// folder): a core.fsmonitor command or a filter driver there would run as
// soon as corvid asks git for the summary. Neither runs.
func TestGitSummaryRunsNoCommandFromTheRepositoryConfig(t *testing.T) {
	if !haveGit() {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	isolateGit(t, dir)
	initRepo(t, dir)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "c")
	marker := filepath.Join(t.TempDir(), "FSMONITOR_RAN")
	git(t, dir, "config", "core.fsmonitor", "touch "+marker+"; false")
	if got := GitSummary(dir); got != "branch trunk, clean" {
		t.Errorf("with a core.fsmonitor command: GitSummary = %q", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("GitSummary ran the repository's core.fsmonitor command")
	}

	git(t, dir, "config", "--unset", "core.fsmonitor")
	filterRan := filepath.Join(t.TempDir(), "FILTER_RAN")
	git(t, dir, "config", "filter.evil.clean", "touch "+filterRan+"; cat")
	writeFiles(t, dir, map[string]string{".gitattributes": "* filter=evil\n"})
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "a.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	got := GitSummary(dir)
	if _, err := os.Stat(filterRan); err == nil {
		t.Error("GitSummary ran the repository's filter driver")
	}
	if !strings.Contains(got, "not run") || !strings.Contains(got, "filter.evil.clean") {
		t.Errorf("with a filter driver: GitSummary = %q, want it to say why git status was not run", got)
	}
}

// BenchmarkGitSummary measures the git summary of a small clean repository
// (the processes it starts), which runs in the background of every session
// start.
func BenchmarkGitSummary(b *testing.B) {
	if !haveGit() {
		b.Skip("git is not installed")
	}
	dir := b.TempDir()
	b.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, args := range [][]string{{"init", "-q"}, {"symbolic-ref", "HEAD", "refs/heads/trunk"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for b.Loop() {
		if got := GitSummary(dir); !strings.HasPrefix(got, "branch trunk") {
			b.Fatalf("GitSummary = %q", got)
		}
	}
}
