// Package serve drives the built `corvid serve` daemon: its transports
// (unix socket, Streamable HTTP, WebSocket), its security checks with
// attacks, and sessions that outlive the connection that started them.
// The official TypeScript SDK's clients drive it too (run.sh, sdk.test.mjs).
//
// Run with `go test ./test/serve/`; set CORVID_BIN to test a prebuilt binary.
package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// daemon is one running `corvid serve` in a throwaway home.
type daemon struct {
	cmd  *exec.Cmd
	home string
	url  string // http://127.0.0.1:PORT/acp, when a TCP listener was asked for
	sock string // the unix socket, when one was asked for
	mu   sync.Mutex
	errb bytes.Buffer
	done chan struct{}
}

// isolatedEnv is the test's environment without anything that reaches the
// real home or a provider, plus a throwaway home.
func isolatedEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "CORVID_") ||
			strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "CORVID_HOME="+filepath.Join(home, ".corvid"), "CORVID_KEYRING=off")
}

var listening = regexp.MustCompile(`corvid serve: listening on (\S+)`)

// startDaemon runs corvid serve with args and waits until every listener
// it printed is up (want: how many).
func startDaemon(t *testing.T, want int, args ...string) *daemon {
	t.Helper()
	home, err := os.MkdirTemp("", "cs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	return startDaemonIn(t, home, want, args...)
}

// startDaemonIn is startDaemon with the home (and so the store) given.
func startDaemonIn(t *testing.T, home string, want int, args ...string) *daemon {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	d := &daemon{home: home, done: make(chan struct{})}
	d.cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	d.cmd.Dir = home
	d.cmd.Env = isolatedEnv(home)
	stderr, _ := d.cmd.StderrPipe()
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			d.mu.Lock()
			d.errb.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		_ = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		// Twice: the first drains (running turns may go on for
		// --drain-timeout), the second interrupts them at once.
		_ = d.cmd.Process.Signal(os.Interrupt)
		time.Sleep(20 * time.Millisecond)
		_ = d.cmd.Process.Signal(os.Interrupt)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
		if strings.Contains(d.stderr(), "DATA RACE") {
			t.Errorf("the daemon (a -race build) reported a data race")
		}
		if t.Failed() {
			t.Logf("daemon stderr:\n%s", d.stderr())
		}
	})
	for i := 0; i < want; i++ {
		select {
		case u := <-urls:
			if s, ok := strings.CutPrefix(u, "unix:"); ok {
				d.sock = s
			} else {
				d.url = u
			}
		case <-d.done:
			t.Fatalf("daemon exited:\n%s", d.stderr())
		case <-time.After(20 * time.Second):
			t.Fatalf("daemon did not listen:\n%s", d.stderr())
		}
	}
	return d
}

func (d *daemon) stderr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.errb.String()
}

// writeScript writes a scripted model into the daemon's home.
func writeScript(t *testing.T, dir string, script any) string {
	t.Helper()
	b, _ := json.Marshal(script)
	p := filepath.Join(dir, "script.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// client is a minimal ACP client over one unix socket connection: it
// sends requests, collects every notification, and answers nothing.
type client struct {
	t    *testing.T
	conn net.Conn
	enc  *json.Encoder
	mu   sync.Mutex
	next int
	wait map[int]chan map[string]any
	note []map[string]any
	reqs []map[string]any // the agent's requests, unanswered unless the test answers
	gone chan struct{}
}

func dial(t *testing.T, sock string) *client {
	t.Helper()
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, conn: nc, enc: json.NewEncoder(nc), wait: map[int]chan map[string]any{}, gone: make(chan struct{})}
	t.Cleanup(func() { nc.Close() })
	go func() {
		defer close(c.gone)
		sc := bufio.NewScanner(nc)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			c.take(m)
		}
	}()
	return c
}

// take files one message from the agent: an answer, a notification or a
// request.
func (c *client) take(m map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := m["id"].(float64); ok && m["method"] == nil {
		if ch := c.wait[int(id)]; ch != nil {
			ch <- m
		}
	} else if m["id"] == nil {
		c.note = append(c.note, m)
	} else {
		c.reqs = append(c.reqs, m)
	}
}

// call sends a request and waits for its answer's result.
func (c *client) call(method string, params any) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan map[string]any, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	if err := c.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		c.t.Fatal(err)
	}
	select {
	case m := <-ch:
		if e, ok := m["error"]; ok {
			c.t.Fatalf("%s: error %v", method, e)
		}
		r, _ := m["result"].(map[string]any)
		return r
	case <-time.After(30 * time.Second):
		c.t.Fatalf("%s: no answer", method)
	}
	return nil
}

// send sends a request without waiting.
func (c *client) send(method string, params any) {
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	_ = c.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

// text is the agent message text of the session's updates so far.
func (c *client) text(sid string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.note {
		p, _ := n["params"].(map[string]any)
		if p == nil || p["sessionId"] != sid {
			continue
		}
		u, _ := p["update"].(map[string]any)
		if u["sessionUpdate"] != "agent_message_chunk" {
			continue
		}
		if ct, _ := u["content"].(map[string]any); ct != nil {
			s, _ := ct["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// waitText waits until the session's text contains want.
func (c *client) waitText(sid, want string) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(c.text(sid), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("session %s never showed %q; got %q", sid, want, c.text(sid))
}

func initialize(c *client) {
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
}

func newSession(c *client, cwd string) string {
	r := c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	sid, _ := r["sessionId"].(string)
	if sid == "" {
		c.t.Fatalf("session/new: %v", r)
	}
	return sid
}

func prompt(text string) []any { return []any{map[string]any{"type": "text", "text": text}} }

// waitRequest waits for the agent's request of method and returns it.
func (c *client) waitRequest(method string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		for _, r := range c.reqs {
			if r["method"] == method {
				c.mu.Unlock()
				return r
			}
		}
		c.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("no %s request arrived", method)
	return nil
}

// waitNote waits for a notification of method that satisfies ok.
func (c *client) waitNote(method string, ok func(params map[string]any) bool) bool {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		for _, n := range c.note {
			if p, _ := n["params"].(map[string]any); n["method"] == method && ok(p) {
				c.mu.Unlock()
				return true
			}
		}
		c.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
