package tui_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// childrenOf lists the processes whose parent is pid (Linux /proc).
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so cut after ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}
