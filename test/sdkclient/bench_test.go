package sdkclient

// The benchmarks of ARCHITECTURE.md §7 that concern the ACP process. They report numbers and
// never fail on a budget; they fail only when corvid answers wrongly. They talk raw
// NDJSON over pipes, not through the SDK, so that client overhead stays out of the
// numbers. bench/README.md lists them with their budgets.
//
//	go test -run='^$' -bench=. -benchtime=50x ./test/sdkclient/

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/corvid-agent/corvid/internal/testkit"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"

// rawCorvid is a corvid process spoken to line by line.
type rawCorvid struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	r      *bufio.Reader
	line   []byte // reused by readLine
}

// spawnRaw starts `corvid acp -m script:script` with stderr discarded. Pipes are plain
// files, so exec starts no copying goroutines and Wait returns when the process is gone.
func spawnRaw(b *testing.B, bin, script string, env []string, dir string) *rawCorvid {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "acp", "-m", "script:"+script)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	inR.Close()
	outW.Close()
	return &rawCorvid{cmd: cmd, stdin: inW, stdout: outR, r: bufio.NewReaderSize(outR, 1<<20)}
}

func (p *rawCorvid) send(b *testing.B, line string) {
	if _, err := p.stdin.WriteString(line); err != nil {
		b.Fatalf("write to corvid: %v", err)
	}
}

// readLine returns the next line, valid until the next call.
func (p *rawCorvid) readLine(b *testing.B) []byte {
	p.line = p.line[:0]
	for {
		chunk, err := p.r.ReadSlice('\n')
		p.line = append(p.line, chunk...)
		switch err {
		case nil:
			return p.line
		case bufio.ErrBufferFull:
			continue
		default:
			b.Fatalf("read from corvid: %v (after %q)", err, p.line)
		}
	}
}

// readResponse reads lines until the response with id; it returns that line and counts
// the session/update notifications before it.
func (p *rawCorvid) readResponse(b *testing.B, id int) (resp []byte, updates int) {
	want := fmt.Appendf(nil, `"id":%d,`, id)
	for {
		line := p.readLine(b)
		switch {
		case bytes.Contains(line, []byte(`"method":"session/update"`)):
			updates++
		case bytes.Contains(line, want) && !bytes.Contains(line, []byte(`"method"`)):
			return line, updates
		case bytes.Contains(line, []byte(`"method"`)):
			b.Fatalf("unexpected request from corvid: %s", line)
		}
	}
}

// exit closes stdin and waits; it fails unless corvid exits 0.
func (p *rawCorvid) exit(b *testing.B) {
	p.stdin.Close()
	err := p.cmd.Wait()
	p.stdout.Close()
	if err != nil {
		b.Fatalf("corvid after stdin EOF: %v, want exit 0", err)
	}
}

func (p *rawCorvid) initialize(b *testing.B) {
	p.send(b, initializeLine)
	if resp, _ := p.readResponse(b, 1); !bytes.Contains(resp, []byte(`"protocolVersion":1`)) {
		b.Fatalf("initialize: %s", resp)
	}
}

// newSession opens a session with request id and returns its id.
func (p *rawCorvid) newSession(b *testing.B, id int, cwd string) string {
	p.send(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", id, cwd))
	resp, _ := p.readResponse(b, id)
	_, after, ok := bytes.Cut(resp, []byte(`"sessionId":"`))
	end := bytes.IndexByte(after, '"')
	if !ok || end < 0 {
		b.Fatalf("session/new: %s", resp)
	}
	return string(after[:end])
}

// benchEnv is an isolated home, workspace and minimal script shared by a benchmark's runs.
func benchEnv(b *testing.B) (bin, script string, env []string, dir string) {
	bin = corvidBin(b)
	script = testkit.WriteScript(b, textScript("", "hi", 0, 0))
	return bin, script, testkit.IsolatedEnvAt(b.TempDir(), "CORVID_KEYRING=off"), b.TempDir()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkSpawnInitialize: spawn → initialize response (ms/init, median; budget ≤ 8 ms
// and ≤ 4× a static Go responder, which bench/compare.sh runs beside it).
// ns/op covers the whole cycle: spawn, initialize, stdin EOF, exit.
func BenchmarkSpawnInitialize(b *testing.B) {
	bin, script, env, dir := benchEnv(b)
	warm := spawnRaw(b, bin, script, env, dir) // page cache, store files
	warm.initialize(b)
	warm.exit(b)

	var inits []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		p := spawnRaw(b, bin, script, env, dir)
		p.initialize(b)
		inits = append(inits, time.Since(start))
		p.exit(b)
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(inits, 0.5)), "ms/init")
	b.ReportMetric(ms(percentile(inits, 0.9)), "p90-ms/init")
}

// BenchmarkStdinEOFExit: stdin closed → process gone, with a session open (ms/exit,
// median; budget ≤ 100 ms, exit 0). ns/op is the same interval, mean.
func BenchmarkStdinEOFExit(b *testing.B) {
	bin, script, env, dir := benchEnv(b)
	var exits []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		p := spawnRaw(b, bin, script, env, dir)
		p.initialize(b)
		p.newSession(b, 2, dir)
		b.StartTimer()
		start := time.Now()
		p.exit(b)
		exits = append(exits, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(exits, 0.5)), "ms/exit")
	b.ReportMetric(ms(percentile(exits, 1)), "max-ms/exit")
}

// BenchmarkScripted10kChunkTurn: one prompt whose answer streams 10,000 one-character
// chunks, measured from writing the prompt to reading its response (updates/s; budget
// ≥ 100k). Each op opens a fresh session (untimed) so history does not grow across ops.
// ms/first-update is the median time from writing the prompt to reading its first
// agent_message_chunk (test/bench's BenchmarkFirstChunk measures it with more care).
// (Gaps between consecutive updates say nothing about added latency: the client
// reads them in batches, so this benchmark does not measure that budget.)
func BenchmarkScripted10kChunkTurn(b *testing.B) {
	const chunks = 10_000
	bin, _, env, dir := benchEnv(b)
	script := testkit.WriteScript(b, map[string]any{
		"chunkSize":   1,
		"onExhausted": "repeat-last",
		"responses": []any{map[string]any{"parts": []any{
			map[string]any{"type": "text", "text": "x", "repeat": chunks},
		}}},
	})
	p := spawnRaw(b, bin, script, env, dir)
	defer p.exit(b)
	p.initialize(b)

	var (
		total   time.Duration
		updates int
		firsts  []time.Duration
	)
	id := 2
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		sid := p.newSession(b, id, dir)
		id++
		prompt := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`+"\n", id, sid)
		want := fmt.Appendf(nil, `"id":%d,`, id)
		b.StartTimer()

		start := time.Now()
		p.send(b, prompt)
		n, msgs := 0, 0
		for {
			line := p.readLine(b)
			if bytes.Contains(line, []byte(`"method":"session/update"`)) {
				n++
				if bytes.Contains(line, []byte(`"sessionUpdate":"agent_message_chunk"`)) {
					// Only the answer's first chunk: an update left
					// over from session/new may already be in the pipe.
					if msgs == 0 {
						firsts = append(firsts, time.Since(start))
					}
					msgs++
				}
				continue
			}
			if bytes.Contains(line, want) {
				if !bytes.Contains(line, []byte(`"stopReason":"end_turn"`)) {
					b.Fatalf("prompt response: %s", line)
				}
				break
			}
			b.Fatalf("unexpected line from corvid: %s", line)
		}
		total += time.Since(start)
		updates += n
		id++
		if msgs != chunks {
			b.Fatalf("got %d agent_message_chunk, want %d", msgs, chunks)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(updates)/total.Seconds(), "updates/s")
	b.ReportMetric(ms(percentile(firsts, 0.5)), "ms/first-update")
}

// BenchmarkIdleRSS: resident memory once initialize and session/new have been answered
// and the process has idled briefly (MiB-rss, median; budget ≤ 16 MiB). Linux only.
func BenchmarkIdleRSS(b *testing.B) {
	bin, script, env, dir := benchEnv(b)
	var rss []float64
	for range b.N {
		p := spawnRaw(b, bin, script, env, dir)
		p.initialize(b)
		p.newSession(b, 2, dir)
		time.Sleep(50 * time.Millisecond)
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
		if err != nil {
			p.exit(b)
			b.Skipf("no /proc: %v", err)
		}
		_, after, _ := bytes.Cut(status, []byte("VmRSS:"))
		var kib float64
		if _, err := fmt.Sscan(string(after), &kib); err != nil {
			b.Fatalf("VmRSS in /proc/%d/status: %v", p.cmd.Process.Pid, err)
		}
		rss = append(rss, kib/1024)
		p.exit(b)
	}
	slices.Sort(rss)
	b.ReportMetric(rss[len(rss)/2], "MiB-rss")
}
