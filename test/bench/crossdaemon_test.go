package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/pgtest"
)

// BenchmarkCrossDaemon measures the latency of a turn seen live on
// another machine (docs/store.md, "Live across machines"): two corvid
// processes with homes of their own share one PostgreSQL 15 store over a
// unix socket; A runs the turns, B's client loaded the session. For each
// of A's agent_message_chunk frames, the time from the moment A's client
// reads it to the moment B's client has read as much of the answer. The
// clock is this process's, which reads both clients' pipes, each on its
// own goroutine. Budget (issue 32): p50 ≤ 20 ms.
//
// One op is one turn of 20 chunks of 5 characters, 25 ms apart (so that
// each chunk is a commit, a notification and a read of its own, the
// case a person watching sees). Metrics: ms-cross-p50, ms-cross-p90 over
// every chunk of the b.N turns. It always runs on PostgreSQL (skipped,
// with the install line, without it).
func BenchmarkCrossDaemon(b *testing.B) {
	bin := pgCorvid(b)
	url := sharedStore(b)
	workspace := b.TempDir()
	const chunks, size = 20, 5
	script := testkit.WriteScript(b, map[string]any{
		"onExhausted": "repeat-last",
		"responses": []any{map[string]any{"chunkSize": size, "delayMs": 25,
			"parts": []any{map[string]any{"type": "text", "text": "0123456789", "repeat": chunks * size / 10}}}},
	})
	a := startAgentOn(b, bin, b.TempDir(), workspace, url, "acp", "-m", "script:"+script)
	bb := startAgentOn(b, bin, b.TempDir(), workspace, url, "acp", "-m", "script:"+script)
	res, _ := a.call("session/new", map[string]any{"cwd": workspace, "mcpServers": []any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &sess); err != nil || sess.SessionID == "" {
		b.Fatalf("session/new: %s %v", res, err)
	}
	a.drain(b)
	bb.call("session/load", map[string]any{"sessionId": sess.SessionID, "cwd": workspace, "mcpServers": []any{}})
	bb.drain(b)

	ra, rb := readChunks(b, a), readChunks(b, bb)
	var lat []time.Duration
	total := chunks * size
	b.ResetTimer()
	for i := range b.N {
		ra.reset()
		rb.reset()
		a.nextID++
		frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"turn %d"}]}}`+"\n", a.nextID, sess.SessionID, i)
		if _, err := a.stdin.Write(frame); err != nil {
			b.Fatal(err)
		}
		ta := ra.wait(b, total)
		tb := rb.wait(b, total)
		for _, c := range ta {
			j := slices.IndexFunc(tb, func(x mark) bool { return x.n >= c.n })
			lat = append(lat, tb[j].at.Sub(c.at))
		}
		b.StopTimer()
		ra.waitResponse(b)
		time.Sleep(20 * time.Millisecond) // the turn's last rows, before the next prompt
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(msAt(lat, 0.5), "ms-cross-p50")
	b.ReportMetric(msAt(lat, 0.9), "ms-cross-p90")
}

// pgCorvid is the corvid binary the PostgreSQL benchmarks run:
// corvid-pg, started directly (store_test.go).
func pgCorvid(tb testing.TB) string {
	tb.Helper()
	return corvidPG(tb)
}

// sharedStore is a fresh database on the benchmarks' PostgreSQL server,
// whatever CORVID_BENCH_STORE says.
func sharedStore(tb testing.TB) string {
	tb.Helper()
	pgtest.Skip(tb)
	pgOnce.Do(func() { pgServer, pgErr = pgtest.Start() })
	if pgErr != nil {
		tb.Fatalf("start PostgreSQL: %v", pgErr)
	}
	u, err := pgServer.NewDB()
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// mark: by at, the client had read n characters of agent text.
type mark struct {
	at time.Time
	n  int
}

// chunkReader reads one agent's stdout on its own goroutine, stamping
// each agent_message_chunk with the time it was read.
type chunkReader struct {
	mu    sync.Mutex
	marks []mark
	n     int
	resp  int // prompt responses read
	cond  *sync.Cond
	err   error
}

func readChunks(b *testing.B, a *agent) *chunkReader {
	r := &chunkReader{}
	r.cond = sync.NewCond(&r.mu)
	go func() {
		for {
			l, err := a.out.ReadSlice('\n')
			at := time.Now()
			if err != nil {
				r.mu.Lock()
				r.err = err
				r.cond.Broadcast()
				r.mu.Unlock()
				return
			}
			switch {
			case bytes.Contains(l, messageChunk):
				var m struct {
					Params struct {
						Update struct {
							Content struct {
								Text string `json:"text"`
							} `json:"content"`
						} `json:"update"`
					} `json:"params"`
				}
				_ = json.Unmarshal(l, &m)
				r.mu.Lock()
				r.n += len(m.Params.Update.Content.Text)
				r.marks = append(r.marks, mark{at, r.n})
				r.cond.Broadcast()
				r.mu.Unlock()
			case bytes.Contains(l, endTurn):
				r.mu.Lock()
				r.resp++
				r.cond.Broadcast()
				r.mu.Unlock()
			}
		}
	}()
	return r
}

func (r *chunkReader) reset() {
	r.mu.Lock()
	r.marks, r.n, r.resp = nil, 0, 0
	r.mu.Unlock()
}

// wait waits until n characters were read and returns the marks.
func (r *chunkReader) wait(b *testing.B, n int) []mark {
	deadline := time.AfterFunc(20*time.Second, func() {
		r.mu.Lock()
		if r.err == nil {
			r.err = fmt.Errorf("timed out with %d of %d characters", r.n, n)
		}
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	defer deadline.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.n < n && r.err == nil {
		r.cond.Wait()
	}
	if r.err != nil {
		b.Fatalf("read: %v", r.err)
	}
	return slices.Clone(r.marks)
}

// waitResponse waits for the prompt's response.
func (r *chunkReader) waitResponse(b *testing.B) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.resp == 0 && r.err == nil {
		r.cond.Wait()
	}
	if r.err != nil {
		b.Fatalf("read: %v", r.err)
	}
}
