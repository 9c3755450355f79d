package permission

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Protected paths: a change to one always asks, in edit mode, under an
// allow rule or --allow, and after an "always allow" answer; only yolo
// (and a deny) decide it without a question. They are the places where a
// write turns into code that runs later, outside any question: corvid's own
// project config (an MCP server's command starts at the next launch), git's
// hooks and config, shell start-up files, and ssh keys and config.

// protectedDirs are directory names that protect everything below them,
// wherever they are (a nested repository has hooks too).
var protectedDirs = []string{".corvid", ".git"}

// startupFiles are the shell start-up files in the home directory.
var startupFiles = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
	".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".inputrc",
	filepath.Join(".config", "fish", "config.fish"),
}

// homeProtectedDirs protect everything below them in the home directory.
var homeProtectedDirs = []string{".ssh", filepath.Join(".config", "corvid"), filepath.Join(".config", "fish", "conf.d")}

// protectedPath returns the first of paths that is protected, by its
// written form or by where it leads, and why.
func protectedPath(paths []string) (string, string, bool) {
	home, _ := os.UserHomeDir()
	for _, p := range paths {
		for _, form := range []string{filepath.Clean(p), tool.RealPath(p)} {
			if why, ok := protectedWhy(form, home); ok {
				return p, why, true
			}
		}
	}
	return "", "", false
}

func protectedWhy(p, home string) (string, bool) {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if slices.Contains(protectedDirs, part) {
			return "inside " + part + "/", true
		}
	}
	if dir, err := os.UserConfigDir(); err == nil {
		d := filepath.Join(dir, "corvid")
		if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return "corvid's user configuration", true
		}
	}
	if home == "" {
		return "", false
	}
	rel, err := filepath.Rel(home, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if slices.Contains(startupFiles, rel) {
		return "a shell start-up file", true
	}
	for _, d := range homeProtectedDirs {
		if rel == d || strings.HasPrefix(rel, d+string(filepath.Separator)) {
			return "inside ~/" + filepath.ToSlash(d) + "/", true
		}
	}
	return "", false
}
