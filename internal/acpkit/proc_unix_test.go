//go:build unix

package acpkit

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Kill reaches the agent's children, not just the agent: a grandchild that ignores its
// parent's death would otherwise outlive every test.
func TestKillReachesTheProcessGroup(t *testing.T) {
	p, err := Spawn([]string{"/bin/sh", "-c", `sleep 300 & echo $!; cat`}, t.TempDir(), os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child pid %q: %v", line, err)
	}
	p.Kill()
	if err := p.Err(); err == nil {
		t.Error("the killed shell reported success")
	}
	// The sleep was the shell's child: once killed it is gone, or a zombie waiting for
	// whoever adopted it to reap it.
	deadline := time.Now().Add(10 * time.Second)
	for !deadOrZombie(t, child) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d of the killed agent is still running", child)
		}
		time.Sleep(10 * time.Millisecond) // polling for a state change, not a timed assertion
	}
}

func deadOrZombie(t *testing.T, pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat("/proc/self/stat"); err != nil {
			t.Skip("no /proc to inspect processes")
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state …; comm may contain spaces, so read after the last ')'.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	return strings.HasPrefix(strings.TrimSpace(rest), "Z")
}
