package main

import (
	"runtime/debug"
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

// A plain `go build` has no build time, only the commit's: it is labelled
// as the commit time, never as "built".
func TestVersionLineCallsTheCommitTimeCommitted(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "fedcba9876543210"}, {Key: "vcs.time", Value: "2026-11-30T09:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	if got, want := formatVersion("0.1.0-dev", "", "", vcs), "corvid 0.1.0-dev (commit fedcba987654-dirty, committed 2026-11-30T09:00:00Z)"; got != want {
		t.Errorf("formatVersion = %q, want %q", got, want)
	}
	// A stamped build time wins over the commit time, and is called built.
	if got, want := formatVersion("1.2.3", "0123456789ab", "2026-12-01T18:00:00Z", vcs), "corvid 1.2.3 (commit 0123456789ab, built 2026-12-01T18:00:00Z)"; got != want {
		t.Errorf("formatVersion = %q, want %q", got, want)
	}
	if got, want := formatVersion("0.1.0-dev", "", "", nil), "corvid 0.1.0-dev (commit unknown, built at an unknown time)"; got != want {
		t.Errorf("formatVersion = %q, want %q", got, want)
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
