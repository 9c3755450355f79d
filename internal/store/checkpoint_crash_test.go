package store

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// checkpointChildEnv makes the test binary run checkpointChild instead of
// the tests: the value is the database path, and CORVID_STORE_CKPT_SESSION
// the session to write.
const checkpointChildEnv = "CORVID_STORE_CKPT_CHILD"

// checkpointChild commits an answer of 6 MiB (1,500 pages of log, past
// checkpointEvery) to a new session as a stream does, prints "committed",
// and waits to be killed: the checkpointer's deferred checkpoint starts
// checkpointIdle after the last commit.
func checkpointChild(path string) int {
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	sid := os.Getenv("CORVID_STORE_CKPT_SESSION")
	ctx := context.Background()
	if err := s.CreateSession(ctx, Session{ID: sid, Cwd: "/w"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for _, row := range answerRows(6) {
		if err := s.Append(sid, "agent_message_chunk", row); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err := s.AwaitCommit(ctx, s.Appended()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	fmt.Println("committed")
	select {}
}

// A process killed while its deferred checkpoint copies the log into the
// database file loses no committed row and leaves a sound file: the
// checkpoint starts checkpointIdle after the stream's last commit, and
// the kills land at several points around and through it.
func TestKill9DuringADeferredCheckpointLosesNoRow(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	path := filepath.Join(t.TempDir(), "s.db")
	rows := answerRows(6)
	var sessions []string
	for i, after := range []time.Duration{0, 10, 20, 30, 40, 60} {
		sid := fmt.Sprint("k", i)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), checkpointChildEnv+"="+path, "CORVID_STORE_CKPT_SESSION="+sid)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		if !lines.Scan() || lines.Text() != "committed" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child %d: %q, want committed", i, lines.Text())
		}
		time.Sleep(checkpointIdle + after*time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		sessions = append(sessions, sid)
		t.Logf("killed %v after the pause began: database file %d bytes", checkpointIdle+after*time.Millisecond, fileSize(path))
	}
	s := openStore(t, path)
	var check string
	if err := s.readDB.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	for _, sid := range sessions {
		evs := mustEvents(t, s, sid)
		if len(evs) != len(rows) {
			t.Fatalf("session %s: %d rows after kill -9, want the %d committed", sid, len(evs), len(rows))
		}
		for i, ev := range evs {
			if !bytes.Equal(ev.Payload, rows[i]) {
				t.Fatalf("session %s row %d differs from the one committed", sid, i+1)
			}
		}
	}
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}
