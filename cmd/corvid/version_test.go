package main

import (
	"strings"
	"testing"
)

// A release build stamps version, commit and date; versionLine prints them
// as given (the commit shortened), with no fallback in the way.
func TestVersionLinePrintsTheStampedBuild(t *testing.T) {
	v, c, d := version, commit, date
	t.Cleanup(func() { version, commit, date = v, c, d })
	version, commit, date = "1.2.3", "0123456789abcdef0123", "2026-12-01T18:00:00Z"
	if got, want := versionLine(), "corvid 1.2.3 (commit 0123456789ab, built 2026-12-01T18:00:00Z)"; got != want {
		t.Errorf("versionLine() = %q, want %q", got, want)
	}
}

func TestHelpArgs(t *testing.T) {
	for in, want := range map[string]string{"": "--help", "help": "--help", "help sessions show": "sessions show --help", "acp": "acp"} {
		var args []string
		if in != "" {
			args = strings.Fields(in)
		}
		if got := strings.Join(helpArgs(args), " "); got != want {
			t.Errorf("helpArgs(%q) = %q, want %q", in, got, want)
		}
	}
}
