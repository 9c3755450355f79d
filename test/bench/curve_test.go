package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corvidagent "github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/testkit"
)

// sizesFromEnv reads a comma-separated list of counts from key, or def.
func sizesFromEnv(b *testing.B, key string, def []int) []int {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want counts like 1000,10000", key, v)
		}
		out = append(out, n)
	}
	return out
}

// vmHWM is the peak resident set of a process, in MiB.
func vmHWM(pid int) float64 {
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkLoadCurve measures session/load of N one-character chunk rows,
// for N in $CORVID_LOAD_SIZES (default 1k, 10k, 30k, 100k): merged-N, one
// answer's chunks as releases before chunk merging stored them (one
// replayed message); distinct-N, chunks that cannot merge (N replayed
// updates). Through a running corvid: request written → every replayed
// update and the response read. Budget (ARCHITECTURE.md §7): linear in events,
// 100k ≤ 400 ms, memory ≤ 64 MiB (MiB-hwm: the loading process's peak
// RSS, start-up included).
func BenchmarkLoadCurve(b *testing.B) {
	bin := testkit.BuildCorvid(b)
	// distinct: rows alternating between a thinking and a text message,
	// which cannot merge: n replayed updates, and as many display entries
	// for the fold to keep or give out as it reads (memory: bounded by the
	// largest message, not the session).
	distinct := func(i int) corvidagent.Event {
		kind := corvidagent.EventThoughtChunk
		if i%2 == 1 {
			kind = corvidagent.EventMessageChunk
		}
		return corvidagent.Event{Kind: kind, MessageID: fmt.Sprint("msg_", i/2),
			Content: &corvidagent.Block{Type: corvidagent.BlockText, Text: fmt.Sprint(i % 10)}}
	}
	for _, n := range sizesFromEnv(b, "CORVID_LOAD_SIZES", []int{1000, 10000, 30000, 100000}) {
		for _, c := range []struct {
			name  string
			event func(i int) corvidagent.Event
		}{{"merged", earlierReleaseChunk}, {"distinct", distinct}} {
			b.Run(fmt.Sprintf("%s-%dk", c.name, n/1000), func(b *testing.B) {
				home, workspace := b.TempDir(), b.TempDir()
				script := map[string]any{"responses": []any{map[string]any{"parts": []any{
					map[string]any{"type": "text", "text": "x"}}}}}
				sid := storedSession(b, bin, home, workspace, script)
				db := storePath(b, home)
				appendRows(b, db, sid, n, c.event)
				events := countEvents(b, db, sid)
				a := timeLoads(b, bin, home, workspace, sid, events)
				b.ReportMetric(vmHWM(a.cmd.Process.Pid), "MiB-hwm")
			})
		}
	}
}

// earlierReleaseChunk is the i-th row of one message as releases before
// chunk merging stored it (corvid now stores a streamed message's chunks
// as one row, eventlog.go): merged rows, one per one-character chunk.
func earlierReleaseChunk(int) corvidagent.Event {
	return corvidagent.Event{Kind: corvidagent.EventMessageChunk, MessageID: "msg_earlier_release",
		Content: &corvidagent.Block{Type: corvidagent.BlockText, Text: "x"}}
}

// appendRows appends n one-character chunk rows to a stored session, one
// row each: the i-th is event(i).
func appendRows(b *testing.B, dbPath, sid string, n int, event func(i int) corvidagent.Event) {
	b.Helper()
	st, err := store.Open(dbPath)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for i := range n {
		ev := event(i)
		row, err := json.Marshal(ev)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Append(sid, string(ev.Kind), row); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStreamedTurn measures one session/prompt whose answer is N
// one-character agent_message_chunks (N from $CORVID_TURN_CHUNKS, default
// 1,000,000), store included: prompt written → every update and the
// response read, a fresh session per op. Budget (ARCHITECTURE.md §7): ≥ 400k
// session/update per s.
func BenchmarkStreamedTurn(b *testing.B) {
	bin := testkit.BuildCorvid(b)
	for _, n := range sizesFromEnv(b, "CORVID_TURN_CHUNKS", []int{1000000}) {
		b.Run(fmt.Sprintf("chunks-%dk", n/1000), func(b *testing.B) {
			home, workspace := b.TempDir(), b.TempDir()
			raw := fmt.Sprintf(`{"responses":[{"chunkSize":1,"parts":[{"type":"text","text":"x","repeat":%d}]}],"onExhausted":"repeat-last"}`, n)
			path := filepath.Join(b.TempDir(), "script.json")
			if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
				b.Fatal(err)
			}
			a := startAgent(b, bin, home, workspace, "acp", "-m", "script:"+path)
			var total time.Duration
			updates := 0
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				res, _ := a.call("session/new", map[string]any{"cwd": workspace, "mcpServers": []any{}})
				sid := string(res[bytes.Index(res, []byte(`"sessionId":"`))+13:])
				sid = sid[:strings.IndexByte(sid, '"')]
				b.StartTimer()
				start := time.Now()
				res, u := a.call("session/prompt", map[string]any{"sessionId": sid,
					"prompt": []any{map[string]any{"type": "text", "text": "stream"}}})
				total += time.Since(start)
				updates += u
				if !bytes.Contains(res, []byte("end_turn")) {
					b.Fatalf("prompt: %s", res)
				}
			}
			b.StopTimer()
			if updates < n*b.N {
				b.Fatalf("%d updates for %d chunks", updates, n*b.N)
			}
			b.ReportMetric(float64(updates)/total.Seconds(), "updates/s")
		})
	}
}
