package serve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/corvid-agent/corvid/internal/testkit"
)

const token = "t0ken-for-the-serve-attack-tests"

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`

// tokenDaemon serves HTTP on loopback with a token, and a scripted model
// whose one turn runs `env` in the shell.
func tokenDaemon(t *testing.T, extra ...string) (*daemon, string) {
	t.Helper()
	dir := t.TempDir()
	tf := filepath.Join(dir, "token")
	if err := os.WriteFile(tf, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": "shell", "input": map[string]any{"command": "env"}}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "done"}}},
	}})
	args := append([]string{"-m", "script:" + script, "--yolo", "--log-level", "debug", "--token-file", tf, "--listen", "127.0.0.1:0"}, extra...)
	return startDaemon(t, 1, args...), dir
}

func request(t *testing.T, method, url string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %v: %v", method, hdr, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestNonLoopbackListenWithoutTokenExits2(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "serve", "-m", "script:x.json", "--listen", "0.0.0.0:0")
	cmd.Env = isolatedEnv(home)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v; want status 2\n%s", err, out)
	}
	if !strings.Contains(string(out), "--token-file") {
		t.Fatalf("message does not name --token-file:\n%s", out)
	}
}

func TestHTTPAttacksAreRefusedAndTheDaemonStaysUp(t *testing.T) {
	d, _ := tokenDaemon(t)
	auth := "Bearer " + token
	self := strings.TrimSuffix(d.url, "/acp")
	json := "application/json"
	cases := []struct {
		name   string
		method string
		hdr    map[string]string
		body   string
		status int
	}{
		{"no token", "POST", map[string]string{"Content-Type": json}, initBody, 401},
		{"wrong token", "POST", map[string]string{"Content-Type": json, "Authorization": "Bearer " + strings.Repeat("x", len(token))}, initBody, 401},
		{"token in the URL is not a token", "POST", map[string]string{"Content-Type": json, "Authorization": "Basic " + token}, initBody, 401},
		{"foreign origin", "POST", map[string]string{"Content-Type": json, "Authorization": auth, "Origin": "http://attacker.example"}, initBody, 403},
		{"rebound origin on our port", "POST", map[string]string{"Content-Type": json, "Authorization": auth, "Origin": "http://attacker.example" + self[strings.LastIndexByte(self, ':'):]}, initBody, 403},
		{"foreign origin on GET", "GET", map[string]string{"Accept": "text/event-stream", "Authorization": auth, "Origin": "http://attacker.example"}, "", 403},
		{"malformed JSON", "POST", map[string]string{"Content-Type": json, "Authorization": auth}, `{"jsonrpc":"2.0",`, 400},
		{"batch", "POST", map[string]string{"Content-Type": json, "Authorization": auth}, `[` + initBody + `]`, 400},
		{"wrong content type", "POST", map[string]string{"Content-Type": "text/plain", "Authorization": auth}, initBody, 415},
		{"oversized body", "POST", map[string]string{"Content-Type": json, "Authorization": auth}, `{"pad":"` + strings.Repeat("x", 17<<20) + `"}`, 413},
		{"unknown connection id", "POST", map[string]string{"Content-Type": json, "Authorization": auth, "Acp-Connection-Id": "00000000-0000-4000-8000-000000000000"}, `{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`, 404},
		{"missing connection id", "POST", map[string]string{"Content-Type": json, "Authorization": auth}, `{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`, 400},
		{"unknown connection stream", "GET", map[string]string{"Accept": "text/event-stream", "Authorization": auth, "Acp-Connection-Id": "nope"}, "", 404},
		{"delete unknown", "DELETE", map[string]string{"Authorization": auth, "Acp-Connection-Id": "nope"}, "", 404},
		{"own origin", "POST", map[string]string{"Content-Type": json, "Authorization": auth, "Origin": self}, initBody, 200},
	}
	for _, c := range cases {
		status, body := request(t, c.method, d.url, c.hdr, c.body)
		if status != c.status {
			t.Errorf("%s: %d %q; want %d", c.name, status, body, c.status)
		}
	}
	if status, _ := request(t, "POST", d.url, map[string]string{"Content-Type": json, "Authorization": auth}, initBody); status != 200 {
		t.Fatalf("after the attacks, initialize: %d; the daemon should still serve", status)
	}
	if strings.Contains(d.stderr(), token) {
		t.Fatal("the token appears in the daemon's log")
	}
}

func TestWebSocketAttacksAreRefused(t *testing.T) {
	d, _ := tokenDaemon(t)
	ws := "ws" + strings.TrimPrefix(d.url, "http")
	dialWith := func(h http.Header) (*websocket.Conn, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, resp, _ := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: h})
		if c != nil {
			t.Cleanup(func() { c.CloseNow() })
		}
		if resp == nil {
			return c, 0
		}
		return c, resp.StatusCode
	}
	if _, st := dialWith(nil); st != 401 {
		t.Errorf("upgrade without token: %d; want 401", st)
	}
	if _, st := dialWith(http.Header{"Authorization": {"Bearer " + token}, "Origin": {"http://attacker.example"}}); st != 403 {
		t.Errorf("upgrade from a foreign origin: %d; want 403", st)
	}
	c, st := dialWith(http.Header{"Authorization": {"Bearer " + token}})
	if st != 101 {
		t.Fatalf("upgrade with token: %d; want 101", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = c.Write(ctx, websocket.MessageText, []byte(`not json`))
	if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), "-32700") {
		t.Fatalf("malformed frame: %s %v; want a -32700 frame", b, err)
	}
	_ = c.Write(ctx, websocket.MessageText, []byte(initBody))
	if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), `"protocolVersion":1`) {
		t.Fatalf("initialize after a malformed frame: %s %v", b, err)
	}
}

func TestTokenNeverReachesAChildProcess(t *testing.T) {
	d, dir := tokenDaemon(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(d.url, "http"), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 24)
	send := func(s string) { _ = c.Write(ctx, websocket.MessageText, []byte(s)) }
	send(initBody)
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + dir + `","mcpServers":[]}}`)
	var sid string
	var frames []string
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v\n%s", err, strings.Join(frames, "\n"))
		}
		frames = append(frames, string(b))
		if sid == "" && strings.Contains(string(b), `"id":2`) {
			i := strings.Index(string(b), `"sessionId":"`)
			sid = string(b)[i+13:]
			sid = sid[:strings.IndexByte(sid, '"')]
			send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"env"}]}}`)
		}
		if strings.Contains(string(b), `"id":3`) {
			break
		}
	}
	all := strings.Join(frames, "\n")
	if !strings.Contains(all, "PATH=") {
		t.Fatalf("the shell's env output never arrived:\n%s", all)
	}
	if strings.Contains(all, token) {
		t.Fatal("a child process saw the token")
	}
}
