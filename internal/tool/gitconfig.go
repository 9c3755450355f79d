package tool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// gitConfigTimeout bounds the one `git config` a walk runs.
const gitConfigTimeout = 2 * time.Second

// excludesFile returns the path of the repository's global ignore file
// (core.excludesFile), "" when there is none. It asks git itself, once per
// walk, `git config --path --get core.excludesFile` in top: so every source
// git reads counts (system, global, repository and per-worktree config,
// [include] and [includeIf], GIT_CONFIG_* variables) and "~/" is expanded
// as git does; a relative path is relative to top, where git resolves it.
// `git config` runs no hook and no fsmonitor, so an untrusted repository
// cannot make it execute anything.
//
// When the key is unset, or git is missing, fails or does not answer
// within gitConfigTimeout, it is git's default: $XDG_CONFIG_HOME/git/ignore
// ($HOME/.config/git/ignore).
func excludesFile(ctx context.Context, top string) string {
	ctx, cancel := context.WithTimeout(ctx, gitConfigTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "--path", "--get", "core.excludesFile")
	cmd.Dir = top
	out, err := cmd.Output()
	if err == nil {
		p := strings.TrimSuffix(string(out), "\n")
		if p == "" {
			return "" // set empty: no global ignore file
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(top, p)
		}
		return p
	}
	// Exit status 1 is "not set"; anything else (no git, a refused
	// repository, a timeout) leaves only the default to go on.
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	if h := gitHome(); h != "" {
		return filepath.Join(h, ".config", "git", "ignore")
	}
	return ""
}

// gitHome is the home directory git uses: $HOME (on Windows, when unset,
// %USERPROFILE%).
func gitHome() string {
	if h := os.Getenv("HOME"); h != "" || runtime.GOOS != "windows" {
		return h
	}
	return os.Getenv("USERPROFILE")
}
