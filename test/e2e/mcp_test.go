package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// mcpRun is corvid on the fake Anthropic server, so the tests can see what
// the model was offered and sent back.
type mcpRun struct {
	*testkit.Editor
	ctx    context.Context
	api    *fakeanthropic.Server
	server string // the stdio MCP server binary
	dir    string
}

func startMCP(t *testing.T) *mcpRun {
	t.Helper()
	api := fakeanthropic.New(t)
	bin := testkit.BuildCorvid(t)
	server := testkit.BuildPackage(t, "./internal/mcp/testdata/stdioserver")
	dir := t.TempDir()
	e := testkit.Start(t, bin, testkit.Options{
		Args: []string{"acp", "-m", "anthropic:claude-sonnet-4-6"},
		Env:  []string{"ANTHROPIC_API_KEY=sk-test", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off"},
		Dir:  dir,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if _, rerr := e.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatal(rerr)
	}
	return &mcpRun{Editor: e, ctx: ctx, api: api, server: server, dir: dir}
}

func (r *mcpRun) newSession(t *testing.T, servers ...map[string]any) string {
	t.Helper()
	var res struct {
		SessionID string `json:"sessionId"`
	}
	r.MustCall(r.ctx, "session/new", map[string]any{"cwd": r.dir, "mcpServers": servers}, &res)
	return res.SessionID
}

func (r *mcpRun) stdio(name string) map[string]any {
	return map[string]any{"name": name, "command": r.server, "args": []string{}, "env": []any{}}
}

func TestMCPToolsReachTheModelAndRunThroughPermission(t *testing.T) {
	r := startMCP(t)
	sid := r.newSession(t, r.stdio("local"))
	r.api.Enqueue(
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_1", "local__echo", `{"text":"hello from mcp"}`)}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}},
	)
	if stop, rerr := r.Prompt(r.ctx, sid, "echo something"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	reqs := r.api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if !strings.Contains(string(reqs[0].Raw), `"local__echo"`) {
		t.Errorf("the MCP tool was not offered to the model: %s", reqs[0].Raw)
	}
	if !strings.Contains(string(reqs[1].Raw), "hello from mcp") {
		t.Errorf("the MCP result did not reach the model: %s", reqs[1].Raw)
	}
	if n := len(r.Permissions()); n != 1 {
		t.Errorf("%d permission requests, want 1 (MCP tools ask by default)", n)
	}
	calls := testkit.OfKind(r.Updates(sid), "tool_call_update")
	if len(calls) == 0 || !strings.Contains(string(calls[len(calls)-1].Raw), `"completed"`) {
		t.Errorf("the MCP tool call did not complete: %v", calls)
	}
}

func TestMCPPromptBecomesACommandAndExpands(t *testing.T) {
	r := startMCP(t)
	sid := r.newSession(t, r.stdio("local"))
	if _, err := r.WaitUpdate(r.ctx, func(u testkit.Update) bool {
		return u.SessionUpdate == "available_commands_update" && strings.Contains(string(u.Raw), `"local:greet"`)
	}); err != nil {
		t.Fatalf("the MCP prompt is not offered as a command: %v", err)
	}
	r.api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("Hello Bob!")}})
	if stop, rerr := r.Prompt(r.ctx, sid, "/local:greet Bob"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	reqs := r.api.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), "Please greet Bob warmly.") {
		t.Fatalf("the prompt was not expanded into the model request: %v", reqs)
	}
}

func TestMCPServerCrashIsAFailedToolCallNotADeadAgent(t *testing.T) {
	r := startMCP(t)
	sid := r.newSession(t, r.stdio("local"))
	r.api.Enqueue(
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_1", "local__crash", `{}`)}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("it crashed")}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("still here")}},
	)
	if stop, rerr := r.Prompt(r.ctx, sid, "crash it"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	calls := testkit.OfKind(r.Updates(sid), "tool_call_update")
	if len(calls) == 0 || !strings.Contains(string(calls[len(calls)-1].Raw), `"failed"`) {
		t.Errorf("the crashed call did not end failed: %v", calls)
	}
	if stop, rerr := r.Prompt(r.ctx, sid, "and now?"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt after the crash: %q %v", stop, rerr)
	}
}

func TestMCPBadServerIsReportedAndTheSessionWorks(t *testing.T) {
	r := startMCP(t)
	sid := r.newSession(t, r.stdio("local"), map[string]any{"name": "broken", "command": "/nonexistent/mcp-server", "args": []string{}, "env": []any{}})
	if _, err := r.WaitUpdate(r.ctx, func(u testkit.Update) bool {
		return u.SessionUpdate == "agent_message_chunk" && strings.Contains(string(u.Raw), `broken`)
	}); err != nil {
		t.Fatalf("the failed server was not reported in the session: %v", err)
	}
	r.api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}})
	if stop, rerr := r.Prompt(r.ctx, sid, "hi"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if !strings.Contains(string(r.api.Requests()[0].Raw), "local__echo") {
		t.Error("the working server's tools are missing")
	}
}

// After session/close, and after stdin EOF, no MCP server process survives.
func TestMCPServersEndWithTheSessionAndWithCorvid(t *testing.T) {
	for _, how := range []string{"close", "eof"} {
		t.Run(how, func(t *testing.T) {
			r := startMCP(t)
			sid := r.newSession(t, r.stdio("local"))
			// session/new does not wait for the server: its command says it is up.
			if _, err := r.WaitUpdate(r.ctx, func(u testkit.Update) bool {
				return u.SessionUpdate == "available_commands_update" && strings.Contains(string(u.Raw), `"local:greet"`)
			}); err != nil {
				t.Fatalf("the MCP server never came up: %v", err)
			}
			pids := testkit.PidsOf(r.server)
			if len(pids) == 0 {
				t.Fatal("no MCP server process is running")
			}
			if how == "close" {
				if _, rerr := r.Call(r.ctx, "session/close", map[string]any{"sessionId": sid}); rerr != nil {
					t.Fatal(rerr)
				}
			} else {
				r.Close()
			}
			testkit.WaitGone(t, "MCP servers after "+how, pids...)
		})
	}
}

// gated is a stdio server that cannot finish starting until the test
// creates its gate file, and that creates its marker file when it answers
// corvid's first request (the MCP handshake).
func (r *mcpRun) gated(t *testing.T, name string) (server map[string]any, gate, marker string) {
	t.Helper()
	d := t.TempDir()
	gate, marker = filepath.Join(d, "gate"), filepath.Join(d, "marker")
	server = r.stdio(name)
	server["args"] = []string{"-gate", gate, "-marker", marker}
	return server, gate, marker
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func open(t *testing.T, gate string) {
	t.Helper()
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// session/new answers while a server is still starting (it cannot finish
// before the test lets it); the first prompt waits for it (the test lets
// the server go once the prompt says it waits), so its tools serve that
// prompt.
func TestMCPSessionNewDoesNotWaitAndTheFirstPromptDoes(t *testing.T) {
	r := startMCP(t)
	srv, gate, marker := r.gated(t, "local")
	sid := r.newSession(t, srv)
	if exists(marker) {
		t.Fatal("the server finished its start before session/new answered, though it was held back")
	}
	r.api.Enqueue(
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_1", "local__echo", `{"text":"served on the first prompt"}`)}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}},
	)
	p := r.CallAsync("session/prompt", testkit.TextPrompt(sid, "echo something"))
	// The server is let go only once the prompt says it waits for it.
	if _, err := r.WaitUpdate(r.ctx, func(u testkit.Update) bool {
		return u.SessionUpdate == "agent_message_chunk" && strings.Contains(string(u.Raw), `Waiting up to 5s for MCP server \"local\" to start.`)
	}); err != nil {
		t.Fatalf("the first prompt did not say it waits for the server: %v", err)
	}
	open(t, gate)
	if raw, rerr := p.Wait(r.ctx); rerr != nil || !strings.Contains(string(raw), `"end_turn"`) {
		t.Fatalf("prompt: %s %v", raw, rerr)
	}
	if !exists(marker) {
		t.Error("the server never answered corvid's handshake")
	}
	reqs := r.api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if !strings.Contains(string(reqs[0].Raw), `"local__echo"`) {
		t.Errorf("the first prompt did not wait for the starting server: its tool was not offered: %s", reqs[0].Raw)
	}
	if !strings.Contains(string(reqs[1].Raw), "served on the first prompt") {
		t.Errorf("the MCP result did not reach the model: %s", reqs[1].Raw)
	}
}

// session/cancel ends the first prompt's wait for a server; the server
// then joins later, with notices, and its tools work.
func TestMCPFirstPromptWaitIsCancellableAndTheServerJoinsLater(t *testing.T) {
	r := startMCP(t)
	srv, gate, marker := r.gated(t, "local")
	sid := r.newSession(t, srv)
	p := r.CallAsync("session/prompt", testkit.TextPrompt(sid, "hello"))
	if _, err := r.WaitUpdate(r.ctx, func(u testkit.Update) bool {
		return u.SessionUpdate == "agent_message_chunk" && strings.Contains(string(u.Raw), `Waiting up to 5s for MCP server \"local\" to start.`)
	}); err != nil {
		t.Fatalf("the first prompt did not say it waits for the server: %v", err)
	}
	r.Cancel(sid)
	raw, rerr := p.Wait(r.ctx)
	if rerr != nil || !strings.Contains(string(raw), `"cancelled"`) {
		t.Fatalf("prompt cancelled while waiting for the server: %s %v", raw, rerr)
	}
	if n := len(r.api.Requests()); n != 0 {
		t.Errorf("%d model requests from a prompt cancelled before it began", n)
	}
	if exists(marker) {
		t.Fatal("the held-back server finished its start")
	}
	if _, err := r.WaitUpdate(r.ctx, func(u testkit.Update) bool {
		return u.SessionUpdate == "agent_message_chunk" && strings.Contains(string(u.Raw), `MCP server \"local\" is still starting`)
	}); err != nil {
		t.Fatalf("no notice that the server is still starting: %v", err)
	}
	open(t, gate)
	if _, err := r.WaitUpdate(r.ctx, func(u testkit.Update) bool {
		return u.SessionUpdate == "agent_message_chunk" && strings.Contains(string(u.Raw), `MCP server \"local\" is ready (`)
	}); err != nil {
		t.Fatalf("no notice that the server joined: %v", err)
	}
	r.api.Enqueue(
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_1", "local__echo", `{"text":"joined late"}`)}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}},
	)
	if stop, rerr := r.Prompt(r.ctx, sid, "echo something"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if reqs := r.api.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1].Raw), "joined late") {
		t.Errorf("the late server's tool did not serve the prompt: %v", reqs)
	}
}

// session/load and session/resume answer while a server is still starting,
// and the first prompt of the loaded session waits for it.
func TestMCPSessionLoadAndResumeDoNotWait(t *testing.T) {
	for _, method := range []string{"session/load", "session/resume"} {
		t.Run(method, func(t *testing.T) {
			r := startMCP(t)
			sid := r.newSession(t)
			r.api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("hi")}})
			if stop, rerr := r.Prompt(r.ctx, sid, "hello"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			r.MustCall(r.ctx, "session/close", map[string]any{"sessionId": sid}, nil)

			srv, gate, marker := r.gated(t, "local")
			r.MustCall(r.ctx, method, map[string]any{"sessionId": sid, "cwd": r.dir, "mcpServers": []any{srv}}, nil)
			if exists(marker) {
				t.Fatalf("the server finished its start before %s answered, though it was held back", method)
			}
			open(t, gate)
			r.api.Enqueue(
				fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_1", "local__echo", `{"text":"after `+method+`"}`)}},
				fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}},
			)
			if stop, rerr := r.Prompt(r.ctx, sid, "echo something"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			reqs := r.api.Requests()
			if len(reqs) != 3 || !strings.Contains(string(reqs[1].Raw), `"local__echo"`) || !strings.Contains(string(reqs[2].Raw), "after "+method) {
				t.Errorf("the first prompt after %s was not served by the server that was starting: %d requests", method, len(reqs))
			}
		})
	}
}
