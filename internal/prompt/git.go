package prompt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// gitCommand is the git executable GitSummary runs; tests point it at a
// name that does not exist.
var gitCommand = "git"

// gitTimeout bounds GitSummary: a session must not wait on a huge or
// networked work tree.
const gitTimeout = 2 * time.Second

// GitSummary describes dir's git state in one line for the environment
// block: "branch main (ahead 1), 2 modified, 1 untracked", "branch main,
// clean", "not a git repository", "git is not installed", or why git
// failed. It runs "git status" without optional locks, so it never competes
// with the user's own git commands for the index lock, and gives up after a
// short timeout.
func GitSummary(dir string) string {
	path, err := exec.LookPath(gitCommand)
	if err != nil {
		return "git is not installed"
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	if keys := repoFilterCommands(ctx, path, dir); len(keys) > 0 {
		return fmt.Sprintf("git status not run: the repository's own config sets %s, a program git status would run", strings.Join(keys, ", "))
	}
	// The repository's config is not the user's: a workspace that came as
	// an archive can bring a .git/config whose core.fsmonitor is a command
	// git status runs. Turn it off (the summary does not need it).
	cmd := exec.CommandContext(ctx, path, "-c", "core.fsmonitor=false", "--no-optional-locks", "-C", dir,
		"status", "--porcelain=v1", "--branch", "--untracked-files=normal")
	cmd.WaitDelay = 500 * time.Millisecond
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("git status timed out after %s", gitTimeout)
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(strings.ToLower(msg), "not a git repository") {
			return "not a git repository"
		}
		var exit *exec.ExitError
		if msg == "" || !errors.As(err, &exit) {
			msg = err.Error()
		}
		first, _, _ := strings.Cut(msg, "\n")
		return "git status failed: " + first
	}
	return summarizeStatus(stdout.String())
}

// repoFilterCommands lists the filter commands that dir's repository
// configures in its own config (.git/config, a worktree's config, and what
// they include), not in the user's or the system's: git status runs a
// clean filter on every file whose stat data differs from the index, which
// is every file of a repository unpacked from an archive. The user's own
// filters (git-lfs installed globally) are theirs to run.
func repoFilterCommands(ctx context.Context, git, dir string) []string {
	cmd := exec.CommandContext(ctx, git, "-C", dir, "config", "--includes", "--show-scope", "--name-only",
		"--get-regexp", `^filter\..*\.(clean|process)$`)
	cmd.WaitDelay = 500 * time.Millisecond
	out, _ := cmd.Output() // exit 1: none set; outside a repository: no local scope
	var keys []string
	for _, line := range strings.Split(string(out), "\n") {
		scope, key, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if ok && (scope == "local" || scope == "worktree" || scope == "command") {
			keys = append(keys, key)
		}
	}
	return keys
}

// summarizeStatus reads "git status --porcelain=v1 --branch" output.
func summarizeStatus(out string) string {
	var branch string
	modified, untracked := 0, 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			branch = branchLine(strings.TrimPrefix(line, "## "))
		case strings.HasPrefix(line, "?? "):
			untracked++
		case len(line) > 3:
			modified++
		}
	}
	if branch == "" {
		branch = "unknown branch"
	}
	if modified == 0 && untracked == 0 {
		return branch + ", clean"
	}
	return fmt.Sprintf("%s, %d modified, %d untracked", branch, modified, untracked)
}

// branchLine turns the "## " header into "branch main (ahead 1)".
func branchLine(h string) string {
	for _, p := range []string{"No commits yet on ", "Initial commit on "} {
		if name, ok := strings.CutPrefix(h, p); ok {
			return "branch " + name + " (no commits yet)"
		}
	}
	if strings.HasPrefix(h, "HEAD (no branch)") {
		return "detached HEAD"
	}
	name, extra, _ := strings.Cut(h, " ")
	name, _, _ = strings.Cut(name, "...")
	s := "branch " + name
	if extra = strings.Trim(extra, "[] "); extra != "" {
		s += " (" + extra + ")"
	}
	return s
}
