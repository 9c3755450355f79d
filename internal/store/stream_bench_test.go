package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// tenMBRows is a 10 MB streamed answer as the agent stores it: the
// answer's 100-character lines merged into rows of 64 KiB of text, each a
// message chunk's JSON (the shape of test/tui's 10 MB answer: 160 rows).
func tenMBRows(msg int) [][]byte {
	line := "012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789lorem ips\\n"
	text := bytes.Repeat([]byte(line), 100_000) // 100,000 lines, \n escaped as JSON stores it
	var rows [][]byte
	for len(text) > 0 {
		n := min(len(text), 64<<10)
		if text[n-1] == '\\' {
			n-- // never split an escape
		}
		rows = append(rows, fmt.Appendf(nil, `{"kind":"agent_message_chunk","messageId":"msg_%024x","content":{"type":"text","text":"%s"}}`, msg, text[:n]))
		text = text[n:]
	}
	return rows
}

// processCPU is the CPU time (user and system) of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writtenBytes is what this process has passed to write calls so far
// (Linux's /proc/self/io wchar; 0 elsewhere).
func writtenBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("wchar: ")); ok {
			n, _ := strconv.ParseInt(string(v), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkStreamTenMB streams a 10 MB answer's rows through the store
// as the agent does while the answer is shown: a few rows appended, then
// a wait for their commit before their frames go out (about 2.5 rows a
// commit), each answer a new session of a store that keeps the earlier
// ones, and a pause of answerPause after each (a turn's end). It reports
// the process's CPU per answer while it streams (cpu-ms/op, the
// checkpointer's work meanwhile included), the CPU with what the store
// does in the pauses and at Close (the rest of the checkpoints;
// cpu-ms-all/op), and the 4 KiB pages written to the log and the
// database file per answer (wpages/op, Linux only).
func BenchmarkStreamTenMB(b *testing.B) {
	s := openStore(b, filepath.Join(b.TempDir(), "s.db"))
	ctx := context.Background()
	var rows [][][]byte
	for i := range b.N {
		mustCreate(b, s, Session{ID: fmt.Sprint("s", i), Cwd: "/w"})
		rows = append(rows, tenMBRows(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	const answerPause = 200 * time.Millisecond
	var streaming time.Duration
	cpu0, w0 := processCPU(), writtenBytes()
	for i := range b.N {
		start := processCPU()
		sid := fmt.Sprint("s", i)
		for j, row := range rows[i] {
			if err := s.AppendOwned(sid, "agent_message_chunk", row); err != nil {
				b.Fatal(err)
			}
			if j%5 == 1 || j%5 == 4 || j == len(rows[i])-1 { // 2, 3, 2, 3, ... rows a commit
				if err := s.AwaitCommit(ctx, s.Appended()); err != nil {
					b.Fatal(err)
				}
			}
		}
		streaming += processCPU() - start
		b.StopTimer()
		time.Sleep(answerPause)
		b.StartTimer()
	}
	b.StopTimer()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	cpu2, w2 := processCPU(), writtenBytes()
	n := float64(b.N)
	b.ReportMetric(float64(streaming)/1e6/n, "cpu-ms/op")
	b.ReportMetric(float64(cpu2-cpu0)/1e6/n, "cpu-ms-all/op")
	b.ReportMetric(float64(w2-w0)/4096/n, "wpages/op")
}
