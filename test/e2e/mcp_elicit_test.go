package e2e

// MCP elicitations pass through to the ACP client (docs/elicitation.md):
// a real MCP server (internal/mcp/testdata/elicitserver, on the official Go
// SDK) elicits during its tool call; the fake editor answers.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// elicitHost advertises the given elicitation modes.
func elicitHost(modes ...string) testkit.Host {
	h := testkit.Minimal()
	h.Name = "elicit-" + strings.Join(modes, "+")
	el := map[string]any{}
	for _, m := range modes {
		el[m] = map[string]any{}
	}
	h.Params["clientCapabilities"] = map[string]any{"elicitation": el}
	return h
}

// mcpElicitSession starts corvid with a script that calls the elicit
// server's tool, initialized as h, with one session that has the server.
func mcpElicitSession(t *testing.T, toolName string, h testkit.Host, opts testkit.Options, serverArgs ...string) (*session, string) {
	t.Helper()
	server := testkit.BuildPackage(t, "./internal/mcp/testdata/elicitserver")
	s := startCorvid(t, toolScript("el__"+toolName, map[string]any{}), opts)
	if _, rerr := s.Initialize(s.ctx, h); rerr != nil {
		t.Fatal(rerr)
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	s.MustCall(s.ctx, "session/new", map[string]any{"cwd": s.workspace, "mcpServers": []any{
		map[string]any{"name": "el", "command": server, "args": append([]string{}, serverArgs...), "env": []any{}},
	}}, &res)
	return s, res.SessionID
}

// On the current MCP protocol the server's question comes back as an
// input request of the tool call (multi round-trip); on 2025-11-25 as an
// elicitation/create request while the call runs. Both reach the client the
// same way.
func TestMCPFormElicitationReachesTheClientScopedToTheToolCall(t *testing.T) {
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			var args []string
			if protocol != "" {
				args = []string{"-protocol", protocol}
			}
			s, sid := mcpElicitSession(t, "ask_name", elicitHost("form"), testkit.Options{
				Elicitation: testkit.AcceptElicitation(map[string]any{"name": "Ada", "color": "green"})}, args...)
			if stop, rerr := s.Prompt(s.ctx, sid, "who am I"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			els := s.Elicitations()
			if len(els) != 1 {
				t.Fatalf("%d elicitations, want 1", len(els))
			}
			res := lastTool(t, s.Updates(sid))
			if el := els[0]; el.Mode != "form" || el.Message != "What is your name?" || el.ToolCallID != res.ID || el.SessionID != sid ||
				!strings.Contains(string(el.Schema), `"enum":["red","green"]`) {
				t.Errorf("elicitation %s (tool call %s)", el.Raw, res.ID)
			}
			if res.Status != "completed" || !strings.Contains(res.Model, "hello Ada (green)") {
				t.Errorf("tool %+v, want the server's answer built from the user's", res)
			}
		})
	}
}

func TestMCPURLElicitationIsPassedAndCompleted(t *testing.T) {
	s, sid := mcpElicitSession(t, "open_login", elicitHost("form", "url"), testkit.Options{
		Elicitation: testkit.AcceptElicitation(nil)})
	if stop, rerr := s.Prompt(s.ctx, sid, "log in"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	els := s.Elicitations()
	if len(els) != 1 || els[0].Mode != "url" || els[0].URL != "https://example.com/login?session=1" || els[0].ID != "el/login-1" {
		t.Fatalf("elicitations %+v", els)
	}
	completed := false
	for _, m := range s.Notifications() {
		if m.Method == "elicitation/complete" && strings.Contains(string(m.Params), `"elicitationId":"el/login-1"`) {
			completed = true
		}
	}
	if !completed {
		t.Error("no elicitation/complete for el/login-1")
	}
	if res := lastTool(t, s.Updates(sid)); !strings.Contains(res.Model, "login accept") {
		t.Errorf("tool %+v", res)
	}
}

// corvid advertises to MCP servers exactly the elicitation modes its ACP
// client advertised, and none to a client without elicitation.
func TestMCPServersSeeTheClientsElicitationModes(t *testing.T) {
	for _, tc := range []struct {
		h    testkit.Host
		want string
	}{
		{testkit.Zed(), "none"},
		{elicitHost("form"), `{"form":{}}`},
		{elicitHost("form", "url"), `{"form":{},"url":{}}`},
	} {
		t.Run(tc.h.Name, func(t *testing.T) {
			s, sid := mcpElicitSession(t, "caps", tc.h, testkit.Options{})
			if stop, rerr := s.Prompt(s.ctx, sid, "caps"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			if res := lastTool(t, s.Updates(sid)); strings.TrimSpace(res.Model) != tc.want {
				t.Errorf("the server saw %q, want %q", res.Model, tc.want)
			}
		})
	}
}

// A session/cancel while the server's question is open withdraws it from the
// client and ends the turn as cancelled.
func TestCancelWithdrawsAnMCPElicitation(t *testing.T) {
	s, sid := mcpElicitSession(t, "ask_name", elicitHost("form"), testkit.Options{Elicitation: testkit.HoldElicitation()})
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "who am I"))
	if _, err := s.WaitElicitation(s.ctx); err != nil {
		t.Fatal(err)
	}
	s.Cancel(sid)
	res, rerr := p.Wait(s.ctx)
	if rerr != nil || !strings.Contains(string(res), `"cancelled"`) {
		t.Fatalf("prompt: %s %v, want cancelled", res, rerr)
	}
	var reqID json.RawMessage
	for _, m := range s.Requests() {
		if m.Method == "elicitation/create" {
			reqID = m.ID
		}
	}
	found := false
	for _, m := range s.Notifications() {
		var p struct{ RequestID json.RawMessage }
		if m.Method == "$/cancel_request" && json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(reqID) {
			found = true
		}
	}
	if !found {
		t.Errorf("no $/cancel_request for elicitation %s", reqID)
	}
	s.stillUsable(t)
}
