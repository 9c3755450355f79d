package tui_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// runCorvid runs a corvid command in the session's directory and home.
func runCorvid(t *testing.T, s *session, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(s.bins, "corvid"), args...)
	cmd.Dir, cmd.Env = s.dir, s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("corvid %v: %v\n%s", args, err, out)
	}
	return string(out)
}

var sessionID = regexp.MustCompile(`sess_[0-9A-Za-z]+`)

func firstSessionID(t *testing.T, list string) string {
	t.Helper()
	id := sessionID.FindString(list)
	if id == "" {
		t.Fatalf("no session in:\n%s", list)
	}
	return id
}
