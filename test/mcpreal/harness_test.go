// Package mcpreal drives the built corvid against real MCP servers from the
// npm registry, which no one here wrote: @modelcontextprotocol/server-everything
// (over stdio, streamable HTTP and SSE) and @modelcontextprotocol/server-filesystem
// (stdio), pinned in package-lock.json and installed by install.sh. The model is
// the fake Anthropic server, scripted to call the servers' tools.
//
// Without the servers installed (or without node), every test skips, saying
// how to install them.
package mcpreal

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// servers locates the installed packages, or skips the test.
type servers struct {
	node       string
	everything string // dist/index.js
	filesystem string
}

func need(t *testing.T) servers {
	t.Helper()
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	nm := filepath.Join(root, "test", "mcpreal", "node_modules", "@modelcontextprotocol")
	s := servers{
		everything: filepath.Join(nm, "server-everything", "dist", "index.js"),
		filesystem: filepath.Join(nm, "server-filesystem", "dist", "index.js"),
	}
	for _, f := range []string{s.everything, s.filesystem} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("real MCP servers not installed (%s is missing): run `bash test/mcpreal/install.sh` (needs Node >= 20 and npm) to test corvid against @modelcontextprotocol/server-everything and server-filesystem", f)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("real MCP servers installed but node is not on PATH: install Node >= 20 to run them")
	}
	s.node = node
	return s
}

// run is one corvid on the fake Anthropic API, with a workspace dir.
type run struct {
	*testkit.Editor
	t   *testing.T
	ctx context.Context
	api *fakeanthropic.Server
	dir string
	srv servers
}

type startOpts struct {
	config      string                     // config.toml content ("" = none)
	permission  testkit.PermissionHandler  // nil: allow once
	host        *testkit.Host              // nil: testkit.Minimal()
	elicitation testkit.ElicitationHandler // nil: decline
}

func start(t *testing.T, o startOpts) *run {
	t.Helper()
	srv := need(t)
	api := fakeanthropic.New(t)
	bin := testkit.BuildCorvid(t)
	dir := t.TempDir()
	home := t.TempDir()
	if o.config != "" {
		if err := os.MkdirAll(filepath.Join(home, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(o.config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := testkit.Start(t, bin, testkit.Options{
		Args: []string{"acp", "-m", "anthropic:claude-sonnet-4-6"},
		Env: []string{"ANTHROPIC_API_KEY=sk-test", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off",
			"CORVID_HOME=" + home, "npm_config_update_notifier=false"},
		Dir:         dir,
		ExitTimeout: 30 * time.Second,
		Permission:  o.permission,
		Elicitation: o.elicitation,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	host := testkit.Minimal()
	if o.host != nil {
		host = *o.host
	}
	if _, rerr := e.Initialize(ctx, host); rerr != nil {
		t.Fatal(rerr)
	}
	r := &run{Editor: e, t: t, ctx: ctx, api: api, dir: dir, srv: srv}
	t.Cleanup(func() {
		for _, pid := range r.serverPIDs() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return r
}

// newSession opens a session with the editor's mcpServers.
func (r *run) newSession(servers ...map[string]any) string {
	r.t.Helper()
	if servers == nil {
		servers = []map[string]any{}
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	r.MustCall(r.ctx, "session/new", map[string]any{"cwd": r.dir, "mcpServers": servers}, &res)
	return res.SessionID
}

// stdio is an editor mcpServers entry running a server over stdio.
func stdio(name, command string, args ...string) map[string]any {
	return map[string]any{"name": name, "command": command, "args": append([]string{}, args...), "env": []any{}}
}

func (r *run) everythingStdio(name string) map[string]any {
	return stdio(name, r.srv.node, r.srv.everything, "stdio")
}

// transports is every transport the everything server speaks; each gives
// the mcpServers entry for a server named name (starting an HTTP or SSE
// server process first).
func (r *run) transports() map[string]func(name string) map[string]any {
	return map[string]func(string) map[string]any{
		"stdio": r.everythingStdio,
		"http": func(name string) map[string]any {
			port := r.serveEverything("streamableHttp", 0)
			return map[string]any{"type": "http", "name": name, "url": fmt.Sprintf("http://127.0.0.1:%d/mcp", port), "headers": []any{}}
		},
		"sse": func(name string) map[string]any {
			port := r.serveEverything("sse", 0)
			return map[string]any{"type": "sse", "name": name, "url": fmt.Sprintf("http://127.0.0.1:%d/sse", port), "headers": []any{}}
		},
	}
}

// serveEverything starts the everything server in an HTTP mode on port (0:
// a free one) and waits until it accepts connections.
func (r *run) serveEverything(mode string, port int) int {
	r.t.Helper()
	if port == 0 {
		port = freePort(r.t)
	}
	cmd := exec.Command(r.srv.node, r.srv.everything, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Dir = r.t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the everything server (%s) did not listen on %d", mode, port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// prompt runs one turn with the scripted model responses.
func (r *run) prompt(sid, text string, responses ...fakeanthropic.Response) {
	r.t.Helper()
	r.api.Enqueue(responses...)
	if stop, rerr := r.Prompt(r.ctx, sid, text); rerr != nil || stop != "end_turn" {
		r.t.Fatalf("prompt %q: %q %v\n%s", text, stop, rerr, r.Stderr())
	}
}

// callTool scripts the model to call one tool, then say done; it returns
// the tool_result the model got back. A server that was still starting
// when the session began (slow on a loaded machine) joins later with a
// notice: a call that found its tool unknown waits for that and tries again.
func (r *run) callTool(sid, name, input string) fakeanthropic.ContentBlock {
	r.t.Helper()
	for attempt := 0; ; attempt++ {
		ready := r.readyNotices(sid)
		res := r.callToolOnce(sid, name, input)
		if attempt == 3 || !strings.Contains(res.ResultText(), fmt.Sprintf("unknown tool %q", name)) {
			return res
		}
		deadline := time.Now().Add(90 * time.Second)
		for r.readyNotices(sid) == ready && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// readyNotices counts the notices of servers that joined late.
func (r *run) readyNotices(sid string) int {
	n := 0
	for _, u := range r.Updates(sid) {
		if u.SessionUpdate == "agent_message_chunk" && strings.HasPrefix(u.Content.Text, "[corvid] MCP server ") &&
			(strings.Contains(u.Content.Text, " is ready (") || strings.Contains(u.Content.Text, " is running again (")) {
			n++
		}
	}
	return n
}

func (r *run) callToolOnce(sid, name, input string) fakeanthropic.ContentBlock {
	r.t.Helper()
	before := len(r.api.Requests())
	id := fmt.Sprintf("toolu_%d", before+1)
	r.prompt(sid, "call "+name,
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse(id, name, input)}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}},
	)
	reqs := r.api.Requests()
	if len(reqs) != before+2 {
		r.t.Fatalf("%d model requests, want %d", len(reqs)-before, 2)
	}
	msgs := reqs[len(reqs)-1].Body.Messages
	for _, b := range msgs[len(msgs)-1].Content {
		if b.Type == "tool_result" && b.ToolUseID == id {
			return b
		}
	}
	r.t.Fatalf("no tool_result for %s in %s", id, reqs[len(reqs)-1].Raw)
	return fakeanthropic.ContentBlock{}
}

// waitText waits for an agent message in the session containing sub (the
// notices corvid sends are agent messages starting "[corvid] ").
func (r *run) waitText(sid, sub string, within time.Duration) string {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		for _, u := range r.Updates(sid) {
			if u.SessionUpdate == "agent_message_chunk" && u.Content.Type == "text" && strings.Contains(u.Content.Text, sub) {
				return u.Content.Text
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no message containing %q within %s; messages: %q", sub, within, testkit.TextOf(r.Updates(sid), "agent_message_chunk"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitCommand waits until the session offers a command.
func (r *run) waitCommand(sid, name string) {
	r.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		for _, u := range r.Updates(sid) {
			if u.SessionUpdate == "available_commands_update" && strings.Contains(string(u.Raw), `"name":"`+name+`"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the command %q was never offered", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serverPIDs lists the live processes, other than corvid, whose working
// directory is the session's: the stdio MCP servers corvid started there,
// and their children.
func (r *run) serverPIDs() []int {
	want, err := filepath.EvalSymlinks(r.dir)
	if err != nil {
		return nil
	}
	return testkit.FindProcesses(func(pid int) bool {
		cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
		return pid != r.PID() && err == nil && cwd == want
	})
}
