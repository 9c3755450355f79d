package mcpreal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// elicitingHost advertises form and url elicitation.
func elicitingHost() *testkit.Host {
	h := testkit.Minimal()
	h.Name = "form+url"
	h.Params["clientCapabilities"] = map[string]any{"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}}
	return &h
}

// The everything server's elicitation tools (which it offers only to a
// client that advertises elicitation) reach the editor as ACP
// elicitation/create, scoped to the tool call; the fake editor validates the
// frames against the ACP schema, the server's own legacy fields
// (enumNames) included.
func TestRealServerElicitationsPassThrough(t *testing.T) {
	answer := func(_ context.Context, params json.RawMessage) (any, error) {
		var p struct{ Mode string }
		_ = json.Unmarshal(params, &p)
		if p.Mode == "url" {
			return map[string]any{"action": "accept"}, nil
		}
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada Lovelace", "check": true, "integer": 7}}, nil
	}
	r := start(t, startOpts{host: elicitingHost(), elicitation: answer})
	sid := r.newSession(r.everythingStdio("everything"))
	r.waitCommand(sid, "everything:simple-prompt")

	res := r.callTool(sid, "everything__trigger-elicitation-request", `{}`)
	if res.IsError || !strings.Contains(res.ResultText(), "Ada Lovelace") {
		t.Errorf("form: the server did not get the answer: %s", res.Content)
	}
	res = r.callTool(sid, "everything__trigger-url-elicitation", `{"url":"https://example.com/authorize?x=1"}`)
	if res.IsError || !strings.Contains(strings.ToLower(res.ResultText()), "accept") {
		t.Errorf("url: %s", res.Content)
	}
	els := r.Elicitations()
	if len(els) != 2 {
		t.Fatalf("%d elicitations, want 2", len(els))
	}
	calls := testkit.OfKind(r.Updates(sid), "tool_call")
	if len(calls) < 2 {
		t.Fatalf("%d tool calls", len(calls))
	}
	form, url := els[0], els[1]
	if form.Mode != "form" || form.ToolCallID != calls[len(calls)-2].ToolCallID || !strings.Contains(string(form.Schema), `"enumNames"`) {
		t.Errorf("form elicitation %s", form.Raw)
	}
	if url.Mode != "url" || url.URL != "https://example.com/authorize?x=1" || !strings.HasPrefix(url.ID, "everything/") || url.ToolCallID != calls[len(calls)-1].ToolCallID {
		t.Errorf("url elicitation %s", url.Raw)
	}
}

// Without elicitation on the ACP side, corvid advertises none to the server,
// which then does not offer its elicitation tool at all.
func TestRealServerSeesNoElicitationWithoutTheClients(t *testing.T) {
	r := start(t, startOpts{})
	sid := r.newSession(r.everythingStdio("everything"))
	r.waitCommand(sid, "everything:simple-prompt")
	r.callTool(sid, "everything__echo", `{"message":"hi"}`)
	reqs := r.api.Requests()
	raw := string(reqs[len(reqs)-1].Raw)
	if !strings.Contains(raw, "everything__echo") || strings.Contains(raw, "everything__trigger-elicitation-request") {
		t.Errorf("offered tools: elicitation tool present = %v", strings.Contains(raw, "trigger-elicitation-request"))
	}
}
