package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/corvid-agent/corvid/internal/testkit"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corvid-agent/corvid/internal/tool"
)

// notices records OnNotice and lets a test wait for one containing a text.
type notices struct {
	mu   sync.Mutex
	all  []string
	more chan struct{}
}

func newNotices() *notices { return &notices{more: make(chan struct{}, 100)} }

func (n *notices) add(s string) {
	n.mu.Lock()
	n.all = append(n.all, s)
	n.mu.Unlock()
	select {
	case n.more <- struct{}{}:
	default:
	}
}

func (n *notices) waitFor(t *testing.T, sub string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		n.mu.Lock()
		for _, s := range n.all {
			if strings.Contains(s, sub) {
				n.mu.Unlock()
				return s
			}
		}
		all := append([]string(nil), n.all...)
		n.mu.Unlock()
		select {
		case <-n.more:
		case <-deadline:
			t.Fatalf("no notice containing %q among %q", sub, all)
		}
	}
}

// waitTool waits until the manager offers the tool.
func waitTool(t *testing.T, m *Manager, name string) tool.Tool {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, tl := range m.Tools() {
			if tl.Name() == name {
				return tl
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no tool %q among %v", name, toolNames(m))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitOutput calls tl until it answers want.
func waitOutput(t *testing.T, tl tool.Tool, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := run(t, tl, `{}`)
		if res.Output == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %q, want %q", tl.Name(), res.Output, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Defect 1: an image that comes back also as structured content reaches
// the model once, as an image, never as base64 text.
func TestStructuredContentBesideAnImageIsNotAdded(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local")}, Options{})
	res := run(t, findTool(t, m, "local__image_structured"), `{}`)
	if len(res.Images) != 1 {
		t.Fatalf("images = %d, want 1", len(res.Images))
	}
	if want := fmt.Sprintf("[image: image/png, %d bytes]", len(res.Images[0].Data)); res.Output != want {
		t.Errorf("the model reads %.300q, want only %q", res.Output, want)
	}
	if len(res.Content) != 1 || res.Content[0].Type != tool.ContentImage {
		t.Errorf("the tool card shows %d blocks, want the image alone: %+v", len(res.Content), res.Content)
	}
	// Structured content alone is still given, with binary strings hidden.
	out := toResult(fromSDK[callToolResult](t, &sdk.CallToolResult{StructuredContent: map[string]any{"blob": strings.Repeat("QUJD", 100), "n": 1}}), true)
	if strings.Contains(out.Output, "QUJDQUJD") || !strings.Contains(out.Output, "binary data, 400 base64 characters, not shown") || !strings.Contains(out.Output, `"n": 1`) {
		t.Errorf("structured content alone = %q", out.Output)
	}
}

// Defect 3: a banner on stdout is logged and skipped.
func TestANonJSONLineOnStdoutIsSkipped(t *testing.T) {
	t.Parallel()
	rec := &logRecorder{}
	m := startOK(t, []Server{stdioServer("local", "-banner")}, Options{Logger: slog.New(rec)})
	if res := run(t, findTool(t, m, "local__echo"), `{"text":"still here"}`); res.Output != "still here" {
		t.Errorf("echo = %+v", res)
	}
	if !rec.has("not JSON-RPC; skipped server=local line=stdioserver 1.0 starting") {
		t.Errorf("the banner was not logged: %q", rec.lines)
	}
}

// Defect 2: a server that dies while idle is reported and restarted; a
// call that hits a crash says corvid restarts the server.
func TestAServerThatDiesIsReportedAndRestarted(t *testing.T) {
	t.Parallel()
	n := newNotices()
	changed := newSignal()
	m := startOK(t, []Server{stdioServer("local")}, Options{OnNotice: n.add, OnChange: changed.fire, RestartBackoff: 50 * time.Millisecond})
	first := m.PIDs()[0]
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	n.waitFor(t, `MCP server "local" stopped (signal: killed); corvid restarts it in 50ms (attempt 1 of 5)`)
	n.waitFor(t, `MCP server "local" is running again (`)
	if res := run(t, waitTool(t, m, "local__echo"), `{"text":"back"}`); res.Output != "back" {
		t.Errorf("echo after the restart = %+v", res)
	}
	if pids := m.PIDs(); len(pids) != 2 || pids[1] == first {
		t.Errorf("PIDs = %v", pids)
	}
	res := run(t, findTool(t, m, "local__crash"), `{}`)
	if !res.IsError || !strings.Contains(res.Output, `MCP server "local" stopped during the call to "crash" (exit status 3); corvid is restarting it`) {
		t.Errorf("crash = %+v", res)
	}
	n.waitFor(t, "(exit status 3); corvid restarts it in 100ms (attempt 2 of 5)")
}

// Restarts are bounded: after MaxRestarts the server stays down, said so.
func TestRestartsAreBounded(t *testing.T) {
	t.Parallel()
	n := newNotices()
	m := startOK(t, []Server{stdioServer("local")}, Options{OnNotice: n.add, RestartBackoff: 20 * time.Millisecond, MaxRestarts: 1})
	if err := syscall.Kill(m.PIDs()[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	n.waitFor(t, "is running again")
	if err := syscall.Kill(m.PIDs()[1], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	n.waitFor(t, `MCP server "local" stopped (signal: killed); corvid gave up restarting it after 1 attempts.`)
	if len(m.Tools()) != 0 || len(m.PIDs()) != 2 {
		t.Errorf("tools %v, pids %v", toolNames(m), m.PIDs())
	}
}

// Defect 4: a slow server does not hold the session up; it joins later.
func TestASlowServerJoinsInTheBackground(t *testing.T) {
	t.Parallel()
	n := newNotices()
	changed := newSignal()
	begin := time.Now()
	m, failures := start(t, []Server{stdioServer("fast"), stdioServer("slow", "-delay", "3s")},
		Options{ReadyWait: 300 * time.Millisecond, OnNotice: n.add, OnChange: changed.fire})
	if d := time.Since(begin); d > 2500*time.Millisecond {
		t.Errorf("Start took %s", d)
	}
	if len(failures) != 0 {
		t.Fatalf("failures = %v", failures)
	}
	waitTool(t, m, "fast__echo")
	n.waitFor(t, `MCP server "slow" is still starting; its tools join when it is ready.`)
	n.waitFor(t, `MCP server "slow" is ready (12 tools, 1 prompts).`)
	changed.wait(t, "OnChange when the slow server joined")
	if res := run(t, findTool(t, m, "slow__echo"), `{"text":"late"}`); res.Output != "late" {
		t.Errorf("echo = %+v", res)
	}
}

// Defect 4: the start timeout is per server.
func TestStartupTimeoutIsPerServer(t *testing.T) {
	t.Parallel()
	slow := stdioServer("slow", "-delay", "2s")
	slow.StartupTimeout = 200 * time.Millisecond
	_, failures := start(t, []Server{slow, stdioServer("ok", "-delay", "500ms")}, Options{StartTimeout: 10 * time.Second})
	if len(failures) != 1 || failures[0].Err.Error() != `MCP server "slow" failed to start: no answer within 200ms (set startup_timeout to allow longer)` {
		t.Fatalf("failures = %v", failures)
	}
}

// Defect 7: an HTTP server down at start is retried until it answers.
func TestHTTPServerDownAtStartIsRetried(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	n := newNotices()
	m, failures := start(t, []Server{{Name: "remote", Type: TypeHTTP, URL: "http://" + addr}},
		Options{OnNotice: n.add, RestartBackoff: 100 * time.Millisecond, MaxRestarts: 50, StartTimeout: 2 * time.Second})
	if len(failures) != 1 || !strings.HasSuffix(failures[0].Err.Error(), "; corvid keeps retrying in the background") {
		t.Fatalf("failures = %v", failures)
	}
	serveRemoteAt(t, addr)
	n.waitFor(t, `MCP server "remote" is running again (1 tools, 1 prompts).`)
	if res := run(t, findTool(t, m, "remote__echo"), `{"text":"up now"}`); res.Output != "up now" {
		t.Errorf("echo = %+v", res)
	}
}

// An HTTP server that is still down after the restart budget is spent is
// still tried: it has no tools yet through which a call could try it again.
func TestHTTPServerDownPastTheRestartBudgetStillJoins(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	n := newNotices()
	m, failures := start(t, []Server{{Name: "remote", Type: TypeHTTP, URL: "http://" + addr}},
		Options{OnNotice: n.add, RestartBackoff: 50 * time.Millisecond, MaxRestarts: 1, StartTimeout: 2 * time.Second})
	if len(failures) != 1 {
		t.Fatalf("failures = %v", failures)
	}
	n.waitFor(t, `MCP server "remote" is still unreachable; corvid keeps trying every 15s.`)
	serveRemoteAt(t, addr)
	n.waitFor(t, `MCP server "remote" is running again (1 tools, 1 prompts).`)
	if res := run(t, findTool(t, m, "remote__echo"), `{"text":"up now"}`); res.Output != "up now" {
		t.Errorf("echo = %+v", res)
	}
}

// freeAddr is a loopback address nothing listens on (yet).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// serveRemoteAt starts the remote test server on addr, late.
func serveRemoteAt(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return newRemoteServer() }, nil)}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

// Defect 5: Close waits for servers even when called twice at once (the
// ACP server closes sessions from two places on stdin EOF).
func TestASecondCloseWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("stubborn", "-linger")}, Options{StopTimeout: 300 * time.Millisecond})
	pid := m.PIDs()[0]
	go m.Close()
	time.Sleep(10 * time.Millisecond) // let the first Close begin; either order must hold
	m.Close()
	if !testkit.ProcessGone(pid) {
		t.Errorf("Close returned while server %d still runs", pid)
	}
}

// Defect 6: progress notifications reach the call's Progress.
func TestProgressReachesTheToolCard(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local")}, Options{})
	var mu sync.Mutex
	var seen []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := findTool(t, m, "local__progress").Run(ctx, &tool.Env{}, tool.Call{ID: "1", Input: json.RawMessage(`{"steps":3}`),
		Progress: func(c []tool.Content) {
			mu.Lock()
			seen = append(seen, c[0].Text)
			mu.Unlock()
		}})
	if err != nil || !strings.HasPrefix(res.Output, "done; token corvid-") {
		t.Fatalf("progress = %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || seen[0] != "33% (1 of 3) — step 1" || seen[2] != "100% (3 of 3) — step 3" {
		t.Errorf("progress updates %q", seen)
	}
}

// Progress updates are bounded in rate, the final one always passes.
func TestProgressIsThrottled(t *testing.T) {
	var got []float64
	f := throttle(func(p *progressParams) { got = append(got, p.Progress) })
	for i := 1; i <= 100; i++ {
		f(&progressParams{Progress: float64(i), Total: 100})
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 100 {
		t.Errorf("passed %v, want [1 100]", got)
	}
}

// Roots: the server learns the session's directories, and their change.
func TestRootsAreTheSessionsDirectories(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	m := startOK(t, []Server{stdioServer("local", "-protocol", "2025-11-25")}, Options{Roots: []string{a, b}})
	roots := findTool(t, m, "local__roots")
	// The server lists the roots when the session begins and again on
	// notifications/roots/list_changed; it answers with its last list.
	waitOutput(t, roots, "file://"+a+" file://"+b)
	c := filepath.Join(a, "sub")
	os.Mkdir(c, 0o755)
	m.SetRoots([]string{c})
	waitOutput(t, roots, "file://"+c)
}

// Without Options.Roots corvid advertises no roots.
func TestNoRootsWithoutOptions(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local", "-protocol", "2025-11-25")}, Options{})
	waitOutput(t, findTool(t, m, "local__roots"), "the client has no roots capability")
}

// Instructions go to the system prompt, named and bounded.
func TestInstructionsAreNamedAndBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 10000)
	m := startOK(t, []Server{stdioServer("short", "-instructions", "Call echo to repeat."), stdioServer("long", "-instructions", long), stdioServer("none")}, Options{})
	got := m.Instructions()
	if !strings.Contains(got, "## MCP server \"short\"\n\nCall echo to repeat.") {
		t.Errorf("instructions = %.300q", got)
	}
	if !strings.Contains(got, "## MCP server \"long\"") || strings.Contains(got, long) || !strings.Contains(got, "(instructions truncated)") {
		t.Errorf("long instructions not bounded (%d bytes)", len(got))
	}
	if strings.Contains(got, `"none"`) {
		t.Errorf("a server without instructions is named")
	}
}

// Defect 9: command names are typable.
func TestCommandNamesAreSanitised(t *testing.T) {
	if got := CommandName("my server.v2", "do it"); got != "my_server_v2:do_it" {
		t.Errorf("CommandName = %q", got)
	}
}

// Resources: the mcp_resource tool lists a server's resources and reads
// one.
func TestResourcesAreListedAndRead(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local")}, Options{})
	rt := findTool(t, m, ResourceToolName)
	if res := run(t, rt, `{"server":"local"}`); !strings.Contains(res.Output, "- mem://note (note) [text/plain]: A note.") {
		t.Errorf("list = %q", res.Output)
	}
	if res := run(t, rt, `{"server":"local","uri":"mem://note"}`); res.IsError || res.Output != "Resource mem://note:\nthe note's text" {
		t.Errorf("read = %+v", res)
	}
	if res := run(t, rt, `{"server":"nobody"}`); !res.IsError || !strings.Contains(res.Output, "these do: local") {
		t.Errorf("unknown server = %+v", res)
	}
	if res := run(t, rt, `{"server":"local","uri":"mem://missing"}`); !res.IsError {
		t.Errorf("missing resource = %+v", res)
	}
}
