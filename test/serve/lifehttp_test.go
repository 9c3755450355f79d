package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sse reads the messages of one Streamable HTTP stream (GET with Accept:
// text/event-stream and hdr) until the test ends.
func sse(t *testing.T, url string, hdr map[string]string) <-chan map[string]any {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %v: %s", hdr, resp.Status)
	}
	out := make(chan map[string]any, 1024)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil {
					out <- m
				}
			}
		}
	}()
	return out
}

// postJSON posts one JSON-RPC message on a new TCP connection (no
// keep-alive) and returns the status, the Acp-Connection-Id header and
// the body.
func postJSON(t *testing.T, url string, hdr map[string]string, msg any) (int, string, string) {
	t.Helper()
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest("POST", url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %v: %v", msg, err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		body.WriteString(sc.Text())
	}
	return resp.StatusCode, resp.Header.Get("Acp-Connection-Id"), body.String()
}

// until reads stream until a message satisfies ok.
func until(t *testing.T, stream <-chan map[string]any, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m := <-stream:
			if ok(m) {
				return m
			}
		case <-deadline:
			t.Fatalf("never got %s", what)
		}
	}
}

// TestStreamableHTTPClientIsServedWhileDraining: a Streamable HTTP client
// posts on new TCP connections; while the daemon drains, a new ACP
// connection gets 503 but the open one's POSTs still go through, so its
// client can cancel its turn (or answer a question), and its streams
// carry the turn to its end.
func TestStreamableHTTPClientIsServedWhileDraining(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, slowerScript(200)), "--yolo", "--listen", "127.0.0.1:0", "--drain-timeout", "10m")
	initMsg := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}}
	code, connID, _ := postJSON(t, d.url, nil, initMsg)
	if code != 200 || connID == "" {
		t.Fatalf("initialize: %d %q", code, connID)
	}
	conn := map[string]string{"Acp-Connection-Id": connID}
	if code, _, _ := postJSON(t, d.url, conn, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": map[string]any{"cwd": dir, "mcpServers": []any{}}}); code != 202 {
		t.Fatalf("session/new: %d", code)
	}
	answer := until(t, sse(t, d.url, conn), "the session/new answer", func(m map[string]any) bool { return m["id"] == float64(2) })
	sid, _ := answer["result"].(map[string]any)["sessionId"].(string)
	scoped := map[string]string{"Acp-Connection-Id": connID, "Acp-Session-Id": sid}
	stream := sse(t, d.url, scoped)
	if code, _, _ := postJSON(t, d.url, scoped, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": map[string]any{"sessionId": sid, "prompt": prompt("go")}}); code != 202 {
		t.Fatalf("session/prompt: %d", code)
	}
	until(t, stream, "the turn's first words", func(m map[string]any) bool {
		b, _ := json.Marshal(m)
		return strings.Contains(string(b), "part-02")
	})

	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	d.waitLog(t, "draining", 1)
	if code, _, body := postJSON(t, d.url, nil, initMsg); code != http.StatusServiceUnavailable {
		t.Fatalf("a new connection while draining: %d %s; want 503", code, body)
	}
	if code, _, body := postJSON(t, d.url, scoped, map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}}); code != 202 {
		t.Fatalf("session/cancel from the open connection while draining: %d %s; want 202", code, body)
	}
	done := until(t, stream, "the prompt's answer", func(m map[string]any) bool { return m["id"] == float64(3) })
	if stopReason(done) != "cancelled" {
		t.Fatalf("the prompt's answer: %v; want cancelled", done)
	}
	if code := d.exited(t, 10*time.Second); code != 0 {
		t.Fatalf("exit status %d; want 0", code)
	}
}
