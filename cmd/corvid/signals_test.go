package main

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A shutdown that a SIGTERM asked for and that does not end in time is
// given up on (stuck is called), and one that ends in time is not.
func TestSignalledShutdownThatHangsIsGivenUpOn(t *testing.T) {
	for _, hangs := range []bool{true, false} {
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		shutdown := make(chan struct{})
		stuck := make(chan struct{})
		stop := watchSignals(logger, make(chan struct{}, 1), func() { close(shutdown) }, 200*time.Millisecond, func() { close(stuck) })
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-shutdown:
		case <-time.After(10 * time.Second):
			t.Fatal("SIGTERM did not call shutdown")
		}
		if !hangs {
			stop() // what returning from the acp command does
		}
		select {
		case <-stuck:
			if !hangs {
				t.Error("stuck was called after watching stopped")
			}
		case <-time.After(time.Second):
			if hangs {
				t.Error("a shutdown that never ended was not given up on")
			}
		}
		if hangs {
			stop()
		}
		if !bytes.Contains(logs.Bytes(), []byte("signal=terminated")) {
			t.Errorf("logs: %s", logs.Bytes())
		}
	}
}

// stuckShutdown logs every goroutine's stack, the one that hangs
// included, and exits 1 (run in a child process: it exits).
func TestStuckShutdownLogsTheGoroutinesAndExits1(t *testing.T) {
	if os.Getenv("CORVID_TEST_STUCK_SHUTDOWN") == "1" {
		go func() { select {} }() // a goroutine the dump must show
		time.Sleep(10 * time.Millisecond)
		stuckShutdown(slog.New(slog.NewTextHandler(os.Stderr, nil)))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestStuckShutdownLogsTheGoroutinesAndExits1$")
	cmd.Env = append(os.Environ(), "CORVID_TEST_STUCK_SHUTDOWN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("stuckShutdown: %v, want exit status 1\n%s", err, stderr.Bytes())
	}
	for _, want := range []string{"level=ERROR", "shutdown not done after 10s; exiting", "goroutine ", "TestStuckShutdownLogsTheGoroutinesAndExits1.func1"} {
		if !bytes.Contains(stderr.Bytes(), []byte(want)) {
			t.Errorf("its log lacks %q:\n%s", want, stderr.Bytes())
		}
	}
}
