// Package bench holds end-to-end benchmarks of the built corvid binary
// (ARCHITECTURE.md §7 budgets). They drive `corvid acp` over pipes with a minimal
// JSON-RPC client, so what is measured is corvid, not a test client's schema
// checks.
//
// Run with `go test -run '^$' -bench . ./test/bench/`; set CORVID_BIN to
// benchmark a prebuilt binary.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, stopPostgres) }

// agent is one running `corvid acp` spoken to over its stdin and stdout.
type agent struct {
	tb     testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser // the pipe out reads
	out    *bufio.Reader
	nextID int
}

func startAgent(tb testing.TB, bin, home, workspace string, args ...string) *agent {
	tb.Helper()
	return startAgentOn(tb, bin, home, workspace, storeURL(tb, home), args...)
}

// startAgentOn is startAgent on the store u ("": the file in home). On a
// postgres:// store it runs corvid-pg, whatever bin is (store_test.go).
func startAgentOn(tb testing.TB, bin, home, workspace, u string, args ...string) *agent {
	tb.Helper()
	env := testkit.IsolatedEnvAt(home, "CORVID_HOME="+filepath.Join(home, "corvid"), "CORVID_KEYRING=off")
	if u != "" {
		env = append(env, "CORVID_STORE="+u)
		bin = corvidPG(tb)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Dir = workspace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	a := &agent{tb: tb, cmd: cmd, stdin: stdin, stdout: stdout, out: bufio.NewReaderSize(stdout, 1<<20)}
	tb.Cleanup(func() {
		a.stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	a.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	return a
}

// close ends the agent's input and waits for it to exit.
func (a *agent) close() {
	a.stdin.Close()
	if err := a.cmd.Wait(); err != nil {
		a.tb.Fatalf("corvid exited: %v", err)
	}
}

var sessionUpdate = []byte(`"method":"session/update"`)

// call sends a request and reads stdout until its response; it returns the
// result and how many session/update notifications came before it.
func (a *agent) call(method string, params any) (json.RawMessage, int) {
	a.tb.Helper()
	a.nextID++
	id := a.nextID
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		a.tb.Fatal(err)
	}
	if _, err := a.stdin.Write(append(line, '\n')); err != nil {
		a.tb.Fatalf("%s: write: %v", method, err)
	}
	updates := 0
	for {
		l, err := a.out.ReadBytes('\n')
		if err != nil {
			a.tb.Fatalf("%s: read: %v", method, err)
		}
		if bytes.Contains(l, sessionUpdate) {
			updates++
			continue
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(l, &m); err != nil {
			a.tb.Fatalf("%s: bad line %q: %v", method, l, err)
		}
		if m.Method != "" || m.ID == nil || *m.ID != id {
			continue // another notification, or an agent request we do not answer here
		}
		if m.Error != nil {
			a.tb.Fatalf("%s: %s", method, m.Error)
		}
		return m.Result, updates
	}
}

// storedSession records a session of about `events` display events with
// script, in its own corvid process, and returns its id.
func storedSession(b *testing.B, bin, home, workspace string, script any) string {
	b.Helper()
	path := testkit.WriteScript(b, script)
	a := startAgent(b, bin, home, workspace, "acp", "-m", "script:"+path)
	res, _ := a.call("session/new", map[string]any{"cwd": workspace, "mcpServers": []any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &sess); err != nil || sess.SessionID == "" {
		b.Fatalf("session/new: %s %v", res, err)
	}
	res, _ = a.call("session/prompt", map[string]any{"sessionId": sess.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": "stream a lot"}}})
	if !bytes.Contains(res, []byte("end_turn")) {
		b.Fatalf("prompt: %s", res)
	}
	a.close()
	return sess.SessionID
}

// countEvents counts a session's stored events.
func countEvents(b *testing.B, dbPath, sid string) int {
	b.Helper()
	st, err := store.Open(dbPath)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	evs, err := st.Events(context.Background(), sid)
	if err != nil {
		b.Fatal(err)
	}
	return len(evs)
}

// BenchmarkLoad5kEvents measures session/load of a session of 5,000 stored
// events, end to end through a running corvid (spawn excluded): request
// written → every replayed update and the response read. Budget: 50 ms
// (ARCHITECTURE.md §7).
//
//   - merged: one answer stored as 5,000 one-character chunk rows, as
//     releases before chunk merging wrote a streamed answer; the replay
//     merges them into one update, so this is the cost of reading and
//     folding the log.
//   - alternating: 2,500 thinking and 2,500 text chunks alternating, which
//     cannot merge: 5,000 replayed updates, the most a 5k-event log can send.
func BenchmarkLoad5kEvents(b *testing.B) {
	bin := testkit.BuildCorvid(b)
	// corvid stores a streamed message's chunks as one row now; the merged
	// case appends its 5,000 rows the way earlier releases wrote them
	// (appendChunkRows, as BenchmarkLoadCurve does).
	merged := map[string]any{"responses": []any{map[string]any{"parts": []any{
		map[string]any{"type": "text", "text": "x"}}}}}
	var parts []any
	for i := range 2500 {
		parts = append(parts,
			map[string]any{"type": "thinking", "text": fmt.Sprint(i % 10)},
			map[string]any{"type": "text", "text": fmt.Sprint(i % 10)})
	}
	alternating := map[string]any{"responses": []any{map[string]any{"parts": parts}}}

	for _, c := range []struct {
		name   string
		script any
		rows   int // chunk rows appended after the turn
	}{{"merged", merged, 5000}, {"alternating", alternating, 0}} {
		b.Run(c.name, func(b *testing.B) {
			home, workspace := b.TempDir(), b.TempDir()
			sid := storedSession(b, bin, home, workspace, c.script)
			db := storePath(b, home)
			if c.rows > 0 {
				appendRows(b, db, sid, c.rows, earlierReleaseChunk)
			}
			events := countEvents(b, db, sid)
			if events < 5000 {
				b.Fatalf("the session has %d stored events, want at least 5000", events)
			}
			timeLoads(b, bin, home, workspace, sid, events)
		})
	}
}

// timeLoads loads session sid b.N times in one fresh corvid (after one
// warm-up load) and reports ms/load, the stored events and the updates
// replayed per load; it returns the loading agent.
func timeLoads(b *testing.B, bin, home, workspace, sid string, events int) *agent {
	b.Helper()
	// -m script: needs a file; the loading process never prompts.
	empty := filepath.Join(b.TempDir(), "empty.json")
	if err := os.WriteFile(empty, []byte(`{"responses":[{"parts":[{"type":"text","text":"-"}]}]}`), 0o644); err != nil {
		b.Fatal(err)
	}
	a := startAgent(b, bin, home, workspace, "acp", "-m", "script:"+empty)
	load := map[string]any{"sessionId": sid, "cwd": workspace, "mcpServers": []any{}}
	_, updates := a.call("session/load", load) // warm: open the store, page in the file
	b.ResetTimer()
	cpu0 := cpuTicks(a.cmd.Process.Pid)
	start := time.Now()
	for range b.N {
		a.call("session/load", load)
	}
	elapsed := time.Since(start)
	cpu := cpuTicks(a.cmd.Process.Pid) - cpu0
	b.StopTimer()
	// ResetTimer drops metrics reported before it: report them all here.
	b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(b.N), "ms/load")
	// The loading process's CPU time (user and system, in 10 ms clock
	// ticks): what the load costs whatever else the machine runs.
	b.ReportMetric(float64(cpu)*10/float64(b.N), "cpu-ms/load")
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(updates), "updates/load")
	return a
}

// cpuTicks is a process's user and system CPU time so far, in clock ticks
// (1/100 s on Linux), from /proc/PID/stat.
func cpuTicks(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (in parentheses, which may hold
	// spaces): utime and stime are the 12th and 13th of them.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}
