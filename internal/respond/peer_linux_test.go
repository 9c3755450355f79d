package respond

import (
	"os"
	"os/exec"
	"testing"
)

func TestParseStatCountsFieldsAfterTheLastParenthesis(t *testing.T) {
	line := "4242 (a) b) (c 2) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 10000 200 18446744073709551615\n"
	started, ppid, ok := parseStat([]byte(line), false)
	if !ok || ppid != 17 || started != 987654 {
		t.Fatalf("parseStat = %d, %d, %v; want 987654, 17, true", started, ppid, ok)
	}
	for _, bad := range []string{"", "4242 (x S 17", "4242 (x) S 17 1 2 3", "4242 (x) S notapid 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 5 1"} {
		if _, _, ok := parseStat([]byte(bad), false); ok {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
	if _, _, ok := parseStat([]byte(line), true); ok {
		t.Error("a truncated read was accepted")
	}
}

func TestDescendsFromFindsAChildAndStopsAtOlderProcesses(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	below, err := descendsFrom(cmd.Process.Pid, os.Getpid())
	if err != nil || !below {
		t.Fatalf("child: descendsFrom = %v, %v; want true", below, err)
	}
	// The test's parent started before the test did: the walk stops there.
	below, err = descendsFrom(os.Getppid(), os.Getpid())
	if err != nil || below {
		t.Fatalf("parent: descendsFrom = %v, %v; want false", below, err)
	}
	// And the other way round: the test descends from its parent.
	below, err = descendsFrom(os.Getpid(), os.Getppid())
	if err != nil || !below {
		t.Fatalf("self under parent: descendsFrom = %v, %v; want true", below, err)
	}
}

func BenchmarkProcStat(b *testing.B) {
	pid := os.Getppid()
	for b.Loop() {
		if _, _, err := procStat(pid); err != nil {
			b.Fatal(err)
		}
	}
}
