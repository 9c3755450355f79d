package prompt

import (
	"path/filepath"
	"testing"
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
