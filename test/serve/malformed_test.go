package serve

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// malformedDaemon serves HTTP and a unix socket with small limits: 4 KiB
// lines on the socket, 64 KiB bodies and frames.
func malformedDaemon(t *testing.T) *daemon {
	t.Helper()
	dir := t.TempDir()
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "fine"}}},
	}})
	return startDaemon(t, 2, "-m", "script:"+script, "--max-line-bytes", "4096", "--max-body-bytes", "65536",
		"--listen", "127.0.0.1:0", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
}

// stillServes fails unless the daemon answers a new client on both
// transports.
func stillServes(t *testing.T, d *daemon, after string) {
	t.Helper()
	if status, body := request(t, "POST", d.url, map[string]string{"Content-Type": "application/json"}, initBody); status != 200 {
		t.Fatalf("after %s, initialize over HTTP: %d %s; the daemon should still serve", after, status, body)
	}
	c := dial(t, d.sock)
	initialize(c)
	newSession(c, t.TempDir())
}

func TestHugeHeadersGet431(t *testing.T) {
	d := malformedDaemon(t)
	status, _ := request(t, "POST", d.url, map[string]string{"Content-Type": "application/json", "X-Pad": strings.Repeat("x", 100<<10)}, initBody)
	if status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("100 KiB of headers: %d; want 431", status)
	}
	stillServes(t, d, "huge headers")
}

func TestWebSocketBinaryAndOversizedFrames(t *testing.T) {
	d := malformedDaemon(t)
	ws := "ws" + strings.TrimPrefix(d.url, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// A binary frame is ignored, as the SDK's reference server does
	// ("Ignoring non-text ACP WebSocket frame"): the next answer is
	// initialize's.
	if err := c.Write(ctx, websocket.MessageBinary, []byte(initBody)); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(strings.Replace(initBody, `"id":1`, `"id":7`, 1))); err != nil {
		t.Fatal(err)
	}
	if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), `"id":7`) || !strings.Contains(string(b), `"protocolVersion":1`) {
		t.Fatalf("after a binary frame, the first answer: %s %v; want initialize's (id 7)", b, err)
	}
	// A frame over --max-body-bytes closes the connection with 1009.
	_ = c.Write(ctx, websocket.MessageText, []byte(`{"pad":"`+strings.Repeat("x", 128<<10)+`"}`))
	_, _, err = c.Read(ctx)
	if st := websocket.CloseStatus(err); st != websocket.StatusMessageTooBig {
		t.Errorf("a 128 KiB frame: %v (status %d); want the connection closed with 1009", err, st)
	}
	stillServes(t, d, "an oversized websocket frame")
}

func TestUnterminatedLineOverTheSocketLimitGetsAnError(t *testing.T) {
	d := malformedDaemon(t)
	nc, err := net.Dial("unix", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// 64 KiB with no newline: the daemon answers as soon as the line
	// passes the 4 KiB limit, without waiting for an end that may never
	// come, and buffers none of it.
	if _, err := nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 64<<10))); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "-32600") || !strings.Contains(line, "frame limit") {
		t.Fatalf("an unterminated line over the limit: %q %v; want a -32600 frame naming the limit", line, err)
	}
	// The rest of that line is discarded up to its newline; the next line
	// is served.
	if _, err := nc.Write([]byte(strings.Repeat("y", 8<<10) + "\"}}\n" + initBody + "\n")); err != nil {
		t.Fatal(err)
	}
	line, err = br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"protocolVersion":1`) {
		t.Fatalf("the line after the oversized one: %q %v; want initialize's answer", line, err)
	}
	stillServes(t, d, "an oversized line")
}

// The daemon serves h2c (HTTP/2 with prior knowledge) beside HTTP/1.1,
// as the RFD asks.
func TestH2CInitialize(t *testing.T) {
	d := malformedDaemon(t)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &p}, Timeout: 10 * time.Second}
	resp, err := client.Post(d.url, "application/json", strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 || resp.Header.Get("Acp-Connection-Id") == "" {
		t.Fatalf("h2c initialize: %s %d, Acp-Connection-Id %q; want HTTP/2 200 with an id", resp.Proto, resp.StatusCode, resp.Header.Get("Acp-Connection-Id"))
	}
}
