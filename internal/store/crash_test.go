package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashChildEnv makes the test binary run crashChild instead of the tests:
// the value is the database path.
const crashChildEnv = "CORVID_STORE_CRASH_CHILD"

const crashSession = "crash"

// crashChild appends numbered events as fast as it can and, every 50
// events, flushes and prints "flushed N" (N events are durable). It runs
// until it is killed.
func crashChild(path string) int {
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, err := s.Acquire(context.Background(), crashSession, "crash child"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("ready")
	pad := strings.Repeat("x", 150)
	for i := 0; ; i++ {
		if err := s.Append(crashSession, "chunk", fmt.Appendf(nil, `{"i":%d,"pad":%q}`, i, pad)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if (i+1)%50 == 0 {
			if err := s.Flush(context.Background()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			fmt.Printf("flushed %d\n", i+1)
		}
	}
}

func TestKill9LosesNoFlushedEvent(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		if testing.Short() {
			t.Skip("spawns a child process")
		}
		path := tempDBPath(t)
		// This process keeps writing to the same file while the child runs, so
		// the two really contend for the write lock.
		parent := openStore(t, path)
		mustCreate(t, parent, Session{ID: crashSession, Cwd: "/w"})
		mustCreate(t, parent, Session{ID: "parent", Cwd: "/w"})
		stopParent := make(chan struct{})
		parentDone := make(chan int)
		go func() {
			n := 0
			for {
				select {
				case <-stopParent:
					parentDone <- n
					return
				default:
				}
				if err := parent.Append("parent", "chunk", fmt.Appendf(nil, "%d", n)); err != nil {
					t.Error(err)
				}
				n++
				time.Sleep(50 * time.Microsecond)
			}
		}()

		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		flushed := 0
		reports := 0
		deadline := time.Now().Add(20 * time.Second)
		for lines.Scan() {
			if n, ok := strings.CutPrefix(lines.Text(), "flushed "); ok {
				flushed, _ = strconv.Atoi(n)
				reports++
			}
			if reports == 100 || time.Now().After(deadline) {
				break
			}
		}
		// Kill mid-stream, without warning.
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() { // reports printed before the kill landed
			if n, ok := strings.CutPrefix(lines.Text(), "flushed "); ok {
				flushed, _ = strconv.Atoi(n)
			}
		}
		cmd.Wait() // reap it, so its pid is really gone
		close(stopParent)
		parentAppended := <-parentDone
		if err := parent.Flush(context.Background()); err != nil {
			t.Fatalf("parent Flush after the child's death: %v", err)
		}
		if got := len(mustEvents(t, parent, "parent")); got != parentAppended {
			t.Errorf("parent session: %d events, want %d", got, parentAppended)
		}
		if flushed == 0 {
			t.Fatal("child never reported a flush")
		}

		s := openStore(t, path)
		if !s.pg { // SQLite's file after a kill -9 mid-commit
			var check string
			if err := s.readDB.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
				t.Fatalf("integrity_check = %q, %v", check, err)
			}
		}
		evs := mustEvents(t, s, crashSession)
		if len(evs) < flushed {
			t.Fatalf("%d events after kill -9, but the child had flushed %d", len(evs), flushed)
		}
		// What survived is a prefix of what was appended: no holes, no reordering.
		for i, ev := range evs {
			want := fmt.Sprintf(`{"i":%d,`, i)
			if ev.Seq != int64(i+1) || !strings.HasPrefix(string(ev.Payload), want) {
				t.Fatalf("event %d = seq %d %.20s, want seq %d %s...", i, ev.Seq, ev.Payload, i+1, want)
			}
		}
		t.Logf("child flushed %d, %d events survived; parent appended %d meanwhile", flushed, len(evs), parentAppended)

		// The dead child's lease has a fresh heartbeat but no process
		// behind it: SQLite takes it over at once; PostgreSQL (whose
		// holders may be on any host) only once it expires.
		if s.pg {
			if _, err := s.Acquire(context.Background(), crashSession, "after crash"); !errors.Is(err, ErrBusy) {
				t.Fatalf("Acquire of a fresh lease of a dead holder on PostgreSQL = %v, want ErrBusy until it expires", err)
			}
			return
		}
		release, err := s.Acquire(context.Background(), crashSession, "after crash")
		if err != nil {
			t.Fatalf("Acquire after the holder was killed = %v", err)
		}
		release()
	})
}
