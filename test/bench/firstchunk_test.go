package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// BenchmarkFirstChunk measures prompt → first chunk through a running corvid,
// store included: from the write of a session/prompt frame to corvid's stdin
// (the clock is read just before that one write(2), see prompt) to the
// moment the first agent_message_chunk session/update line is read from its
// stdout. Budget (ARCHITECTURE.md §7):
// ≤ 2 ms while the answer is a large burst. One op is one prompt; each
// prompt's whole answer is read (untimed for the metric) before the next is
// sent, and before sending the benchmark checks that no byte of earlier output
// is waiting, so the clock never starts with a frame already in the pipe.
//
//   - tiny: a two-character answer, the baseline (nothing queued behind it).
//   - burst-Nk: the answer is N one-character chunks ($CORVID_FIRST_CHUNK_BURST,
//     default 200,000); a fresh session per prompt.
//   - history-Nk: the same burst in a session that already answered one
//     N-chunk turn (played untimed in the same session first).
//
// Metrics: ms-first-chunk-p50 and ms-first-chunk-p90 over the b.N prompts;
// ns/op is prompt written → response read, for the whole op.
func BenchmarkFirstChunk(b *testing.B) {
	bin := testkit.BuildCorvid(b)
	burst := sizesFromEnv(b, "CORVID_FIRST_CHUNK_BURST", []int{200000})[0]
	cases := []struct {
		name    string
		chunks  int  // one-character chunks in the answer; 0: the tiny answer
		history bool // play one untimed turn first
	}{
		{"tiny", 0, false},
		{fmt.Sprintf("burst-%dk", burst/1000), burst, false},
		{fmt.Sprintf("history-%dk", burst/1000), burst, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			home, workspace := b.TempDir(), b.TempDir()
			raw := `{"responses":[{"parts":[{"type":"text","text":"hi"}]}],"onExhausted":"repeat-last"}`
			if c.chunks > 0 {
				raw = fmt.Sprintf(`{"responses":[{"chunkSize":1,"parts":[{"type":"text","text":"x","repeat":%d}]}],"onExhausted":"repeat-last"}`, c.chunks)
			}
			path := filepath.Join(b.TempDir(), "script.json")
			if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
				b.Fatal(err)
			}
			a := startAgent(b, bin, home, workspace, "acp", "-m", "script:"+path)
			want := max(c.chunks, 1)
			firsts := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				res, _ := a.call("session/new", map[string]any{"cwd": workspace, "mcpServers": []any{}})
				sid := string(res[bytes.Index(res, []byte(`"sessionId":"`))+13:])
				sid = sid[:bytes.IndexByte([]byte(sid), '"')]
				a.drain(b) // session/new's notifications follow its response
				if c.history {
					a.prompt(b, sid, want)
				}
				b.StartTimer()
				first, _ := a.prompt(b, sid, want)
				firsts = append(firsts, first)
				b.StopTimer()
				// Closed, so the sessions of earlier ops (each polls its
				// command files) do not load the machine.
				a.call("session/close", map[string]any{"sessionId": sid})
				b.StartTimer()
			}
			b.StopTimer()
			slices.Sort(firsts)
			b.ReportMetric(msAt(firsts, 0.5), "ms-first-chunk-p50")
			b.ReportMetric(msAt(firsts, 0.9), "ms-first-chunk-p90")
		})
	}
}

// msAt is the q-quantile of sorted durations, in ms.
func msAt(sorted []time.Duration, q float64) float64 {
	i := int(q*float64(len(sorted)) + 0.5)
	i = min(max(i-1, 0), len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}

var (
	messageChunk = []byte(`"sessionUpdate":"agent_message_chunk"`)
	endTurn      = []byte(`"stopReason":"end_turn"`)
)

// prompt sends one session/prompt to session sid and reads until its
// response. It returns the time from the prompt written to the first
// agent_message_chunk read, and from the prompt written to the response read;
// it fails unless the answer had wantChunks message chunks and ended the turn.
// Before writing it makes sure nothing from earlier is waiting to be read.
func (a *agent) prompt(b *testing.B, sid string, wantChunks int) (first, whole time.Duration) {
	b.Helper()
	a.quiet(b)
	a.nextID++
	idKey := fmt.Appendf(nil, `"id":%d,`, a.nextID)
	frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"stream"}]}}`+"\n", a.nextID, sid)
	// The clock starts just before the one write(2) of the frame into an
	// empty pipe, not after it: the write wakes corvid, which may take the
	// CPU from this goroutine before it reads the clock, so a clock read
	// after the write can start late and see a first chunk already waiting.
	start := time.Now()
	if _, err := a.stdin.Write(frame); err != nil {
		b.Fatalf("prompt: write: %v", err)
	}
	chunks := 0
	for {
		l, err := a.out.ReadSlice('\n')
		if err != nil {
			b.Fatalf("prompt: read: %v", err)
		}
		if bytes.Contains(l, messageChunk) {
			if chunks == 0 {
				first = time.Since(start)
			}
			chunks++
			continue
		}
		if bytes.Contains(l, sessionUpdate) || !bytes.Contains(l, idKey) {
			continue // another update, or a request to the client
		}
		whole = time.Since(start)
		if !bytes.Contains(l, endTurn) {
			b.Fatalf("prompt response: %s", l)
		}
		break
	}
	if chunks < wantChunks {
		b.Fatalf("%d agent_message_chunk updates, want at least %d", chunks, wantChunks)
	}
	return first, whole
}

// drain reads and drops whatever corvid writes until it has been silent for
// 50 ms.
func (a *agent) drain(b *testing.B) {
	b.Helper()
	f := a.stdout.(*os.File)
	for {
		if err := f.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			b.Fatal(err)
		}
		_, err := a.out.ReadSlice('\n')
		if errors.Is(err, os.ErrDeadlineExceeded) && a.out.Buffered() == 0 {
			break
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			b.Fatalf("drain: %v", err)
		}
	}
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		b.Fatal(err)
	}
}

// quiet fails unless no output of corvid's is waiting: nothing buffered in
// the reader, and nothing arriving on the pipe for a few milliseconds (the
// previous prompt's response is its turn's last frame; anything after it
// would be read as this prompt's and spoil the clock).
func (a *agent) quiet(b *testing.B) {
	b.Helper()
	if n := a.out.Buffered(); n > 0 {
		b.Fatalf("%d bytes of earlier output not read before the prompt", n)
	}
	f, ok := a.stdout.(*os.File)
	if !ok {
		b.Fatal("stdout is not a pipe file")
	}
	if err := f.SetReadDeadline(time.Now().Add(5 * time.Millisecond)); err != nil {
		b.Fatal(err)
	}
	_, err := a.out.Peek(1)
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		b.Fatal(err)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		l, _ := a.out.Peek(a.out.Buffered())
		b.Fatalf("output waiting before the prompt (%v): %.200q", err, l)
	}
}
