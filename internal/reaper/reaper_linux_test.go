package reaper

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// parentOf is the ppid of pid, or -1 once pid is gone (reaped).
func parentOf(t *testing.T, pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// A process that detaches (its parent exits, as with a double fork) stays
// below us, and once it exits it is reaped, not left a zombie; meanwhile
// the children os/exec starts are still waited for by their Cmd.Wait.
func TestAdoptKeepsDetachedProcessesBelowAndReapsThem(t *testing.T) {
	if err := Adopt(nil); err != nil {
		t.Skipf("cannot adopt here: %v", err)
	}
	pidFile := t.TempDir() + "/pid"
	// sh starts a sleeper in a new session and exits at once: a double fork.
	cmd := exec.Command("sh", "-c", "setsid sh -c 'echo $$ > "+pidFile+"; exec sleep 0.5' </dev/null >/dev/null 2>&1 & sleep 0.1")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var orphan int
	for deadline := time.Now().Add(5 * time.Second); orphan == 0; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		orphan, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if time.Now().After(deadline) {
			t.Fatal("the detached process never started")
		}
	}
	if got := parentOf(t, orphan); got != os.Getpid() {
		t.Fatalf("the detached process's parent is %d, want us (%d): not adopted", got, os.Getpid())
	}

	// Direct children keep their exit status while orphans come and go.
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 20 {
		wg.Go(func() { errs <- exec.Command("true").Run() })
		wg.Go(func() { errs <- exec.Command("sh", "-c", "false").Run() })
	}
	wg.Wait()
	close(errs)
	var ok, failed int
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case strings.Contains(err.Error(), "exit status 1"):
			failed++
		default:
			t.Errorf("Cmd.Run of a direct child: %v (its exit was stolen?)", err)
		}
	}
	if ok != 20 || failed != 20 {
		t.Errorf("%d ok and %d exit 1, want 20 and 20", ok, failed)
	}

	for deadline := time.Now().Add(5 * time.Second); parentOf(t, orphan) != -1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the adopted process %d was never reaped (ppid %d)", orphan, parentOf(t, orphan))
		}
	}
}
