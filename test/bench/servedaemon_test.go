package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// The daemon's benchmarks (serve_test.go) drive a built `corvid serve`
// with plain NDJSON clients over its unix socket and its WebSocket.

// serveDaemon is one running `corvid serve` with a socket and, when asked,
// a loopback HTTP listener.
type serveDaemon struct {
	cmd  *exec.Cmd
	sock string
	url  string // http://127.0.0.1:PORT/acp
	done chan struct{}
}

var listeningOn = regexp.MustCompile(`corvid serve: listening on (\S+)`)

// startServe runs `corvid serve -m script:SCRIPT --yolo` on a socket in
// home, and on 127.0.0.1:0 when tcp is set.
func startServe(b *testing.B, bin, home, script string, tcp bool) *serveDaemon {
	b.Helper()
	d := &serveDaemon{sock: filepath.Join(home, "s.sock"), done: make(chan struct{})}
	args := []string{"serve", "-m", "script:" + script, "--yolo", "--log-level", "warn", "--listen", "unix:" + d.sock}
	want := 1
	if tcp {
		args = append(args, "--listen", "127.0.0.1:0")
		want = 2
	}
	d.cmd = exec.Command(bin, args...)
	d.cmd.Env = testkit.IsolatedEnvAt(home, "CORVID_HOME="+filepath.Join(home, "corvid"), "CORVID_KEYRING=off")
	d.cmd.Dir = home
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	urls := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listeningOn.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		_ = d.cmd.Wait()
		close(d.done)
	}()
	b.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		time.Sleep(20 * time.Millisecond)
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(20 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	})
	for range want {
		select {
		case u := <-urls:
			if !strings.HasPrefix(u, "unix:") {
				d.url = u
			}
		case <-time.After(20 * time.Second):
			b.Fatal("corvid serve did not listen")
		}
	}
	return d
}

// rss is the daemon's VmRSS in KiB.
func (d *serveDaemon) rss(b *testing.B) int {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(d.cmd.Process.Pid) + "/status")
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// peer is one ACP connection to the daemon: write sends a message, read
// returns the next one.
type peer struct {
	b     *testing.B
	write func([]byte) error
	read  func() ([]byte, error)
	close func()
	next  int
}

func sockPeer(b *testing.B, path string) *peer {
	b.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReaderSize(c, 1<<16)
	p := &peer{b: b,
		write: func(m []byte) error { _, err := c.Write(append(m, '\n')); return err },
		read: func() ([]byte, error) {
			l, err := br.ReadBytes('\n')
			return bytes.TrimSpace(l), err
		},
		close: func() { c.Close() }}
	b.Cleanup(p.close)
	return p
}

func wsPeer(b *testing.B, url string) *peer {
	b.Helper()
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		b.Fatal(err)
	}
	ws.SetReadLimit(1 << 24)
	p := &peer{b: b,
		write: func(m []byte) error { return ws.Write(ctx, websocket.MessageText, m) },
		read:  func() ([]byte, error) { _, m, err := ws.Read(ctx); return m, err },
		close: func() { ws.CloseNow() }}
	b.Cleanup(p.close)
	return p
}

// send writes a request and returns its id.
func (p *peer) send(method string, params any) int {
	p.b.Helper()
	p.next++
	m, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.next, "method": method, "params": params})
	if err := p.write(m); err != nil {
		p.b.Fatalf("%s: %v", method, err)
	}
	return p.next
}

// frame is the part of a message the benchmarks look at.
type frame struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Params struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	} `json:"params"`
}

// await reads until the answer to id, handing every other message to
// each (nil: dropped), and returns the answer's result.
func (p *peer) await(id int, each func(frame, time.Time)) json.RawMessage {
	p.b.Helper()
	for {
		m, err := p.read()
		if err != nil {
			p.b.Fatalf("read: %v", err)
		}
		now := time.Now()
		var f frame
		if err := json.Unmarshal(m, &f); err != nil {
			p.b.Fatalf("bad message %q: %v", m, err)
		}
		if f.Method == "" && f.ID != nil && *f.ID == id {
			if f.Error != nil {
				p.b.Fatalf("error: %s", f.Error)
			}
			return f.Result
		}
		if each != nil {
			each(f, now)
		}
	}
}

func (p *peer) call(method string, params any) json.RawMessage {
	p.b.Helper()
	return p.await(p.send(method, params), nil)
}

func (p *peer) initialize() {
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
}

func (p *peer) newSession(cwd string) string {
	var r struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(p.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}), &r)
	if r.SessionID == "" {
		p.b.Fatal("session/new: no session id")
	}
	return r.SessionID
}

func (p *peer) load(sid, cwd string) {
	p.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
}

func promptParams(sid string) map[string]any {
	return map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}}
}

// wordsScript answers every prompt with n words w0000 … (one chunk each,
// delayMs apart); wordsText is that answer.
func wordsScript(b *testing.B, n, delayMs int) string {
	b.Helper()
	raw, _ := json.Marshal(map[string]any{"chunkSize": 6, "delayMs": delayMs, "onExhausted": "repeat-last",
		"responses": []any{map[string]any{"parts": []any{map[string]any{"type": "text", "text": wordsText(n)}}}}})
	path := filepath.Join(b.TempDir(), "script.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

func wordsText(n int) string {
	var s strings.Builder
	for i := range n {
		s.WriteString("w")
		s.WriteString(strconv.Itoa(10000 + i)[1:])
		s.WriteString(" ")
	}
	return s.String()
}

// parallel runs f(i) for i < n at once and waits.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}
