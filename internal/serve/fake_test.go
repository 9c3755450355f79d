package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAgent is a protocol handler small enough to read: it answers
// initialize, session/new (then sends an update for the session),
// session/load (an update, then the answer), echo, and flood (N large
// notifications without a session, then the answer). ended receives once
// per connection whose input ended.
type fakeAgent struct {
	ended chan string
	mu    sync.Mutex
	n     int
}

func newFakeAgent() *fakeAgent { return &fakeAgent{ended: make(chan string, 16)} }

func (f *fakeAgent) handle(ctx context.Context, r io.Reader, w io.Writer) error {
	f.mu.Lock()
	f.n++
	name := fmt.Sprintf("c%d", f.n)
	f.mu.Unlock()
	defer func() { f.ended <- name }()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	write := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = w.Write(append(b, '\n'))
	}
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		answer := func(result any) { write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}) }
		update := func(sid string) {
			write(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sid, "update": map[string]any{"sessionUpdate": "agent_message_chunk"}}})
		}
		switch m.Method {
		case "initialize":
			answer(map[string]any{"protocolVersion": 1})
		case "session/new":
			answer(map[string]any{"sessionId": "s1"})
			update("s1")
		case "session/load":
			update("s1")
			answer(map[string]any{})
		case "session/prompt":
			update("s1")
			answer(map[string]any{"stopReason": "end_turn"})
		case "echo":
			answer(m.Params)
		case "flood":
			var p struct{ N, Size int }
			_ = json.Unmarshal(m.Params, &p)
			for i := 0; i < p.N; i++ {
				write(map[string]any{"jsonrpc": "2.0", "method": "note", "params": map[string]any{"pad": strings.Repeat("x", p.Size)}})
			}
			answer(map[string]any{})
		}
	}
	return nil
}

// startServer serves f on a loopback port and a unix socket.
func startServer(t *testing.T, f *fakeAgent, opts Options) (*Server, string, string) {
	t.Helper()
	opts.Handler = f.handle
	s := New(opts)
	sock := t.TempDir() + "/s.sock"
	lns, err := s.Listen([]Addr{{Network: "tcp", Address: "127.0.0.1:0"}, {Network: "unix", Address: sock}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Serve(ctx, lns); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, lns[0].URL, sock
}

func post(t *testing.T, url string, hdr map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`

// connect initializes a Streamable HTTP connection and returns its id.
func connect(t *testing.T, url string) string {
	t.Helper()
	resp, body := post(t, url, nil, initBody)
	if resp.StatusCode != 200 || !strings.Contains(body, `"protocolVersion":1`) {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("Acp-Connection-Id")
	if id == "" {
		t.Fatal("initialize: no Acp-Connection-Id")
	}
	return id
}

// sse opens a stream and returns a channel of its data lines.
func sse(t *testing.T, ctx context.Context, url, conn, session string) (<-chan string, *http.Response) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Acp-Connection-Id", conn)
	if session != "" {
		req.Header.Set("Acp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 64)
	if resp.StatusCode != 200 {
		resp.Body.Close()
		close(out)
		return out, resp
	}
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- d
			}
		}
	}()
	return out, resp
}

func recv(t *testing.T, ch <-chan string, want string) string {
	t.Helper()
	select {
	case d, ok := <-ch:
		if !ok {
			t.Fatalf("stream ended; want %s", want)
		}
		if !strings.Contains(d, want) {
			t.Fatalf("got %s; want %s", d, want)
		}
		return d
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", want)
	}
	return ""
}

func dialUnix(t *testing.T, sock string) (net.Conn, *bufio.Scanner) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sc := bufio.NewScanner(c)
	sc.Buffer(nil, 1<<24)
	return c, sc
}
