package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMalformedJSONIsParseErrorWithNullID(t *testing.T) {
	s := startCorvid(t, text("x", 0), testkit.Options{})
	s.ready(t, testkit.Zed())
	for _, raw := range []string{`{"jsonrpc":"2.0","id":7,"method":"session/new"`, `not json at all`, `{"jsonrpc":"2.0",}`} {
		s.Send(raw)
		m, err := s.NextResponse(s.ctx, nil)
		if err != nil {
			t.Fatalf("%s: no response: %v", raw, err)
		}
		expectError(t, raw, m, testkit.CodeParseError)
		s.stillUsable(t)
	}
}

func TestNonRequestIsInvalidRequest(t *testing.T) {
	s := startCorvid(t, text("x", 0), testkit.Options{})
	s.ready(t, testkit.Zed())
	// The JSON-RPC 2.0 specification's own examples of invalid requests.
	for _, raw := range []string{`{"jsonrpc":"2.0","method":1,"params":"bar"}`, `1`, `"text"`} {
		s.Send(raw)
		m, err := s.NextResponse(s.ctx, nil)
		if err != nil {
			t.Fatalf("%s: no response: %v", raw, err)
		}
		expectError(t, raw, m, testkit.CodeInvalidRequest)
		s.stillUsable(t)
	}
}

func TestUnknownMethodsAreMethodNotFound(t *testing.T) {
	s := startCorvid(t, text("x", 0), testkit.Options{})
	s.ready(t, testkit.Zed())
	for _, method := range []string{"session/explode", "_corvid.dev/unknown", "_zed.dev/workspace/buffers"} {
		p := s.CallAsync(method, map[string]any{})
		m, err := s.NextResponse(s.ctx, json.RawMessage(p.ID))
		if err != nil {
			t.Fatalf("%s: no response: %v", method, err)
		}
		expectError(t, method, m, testkit.CodeMethodNotFound)
		s.stillUsable(t)
	}
}

func TestBadParamsAreInvalidParamsWithDetails(t *testing.T) {
	s := startCorvid(t, text("x", 0), testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	for name, c := range map[string]struct {
		method string
		params any
	}{
		"session/new with relative cwd": {"session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}}},
		"session/new cwd not a string":  {"session/new", map[string]any{"cwd": 42, "mcpServers": []any{}}},
		"session/prompt without prompt": {"session/prompt", map[string]any{"sessionId": sid}},
		"session/prompt params array":   {"session/prompt", []any{sid}},
	} {
		p := s.CallAsync(c.method, c.params)
		m, err := s.NextResponse(s.ctx, json.RawMessage(p.ID))
		if err != nil {
			t.Fatalf("%s: no response: %v", name, err)
		}
		expectError(t, name, m, testkit.CodeInvalidParams)
		if m.Error != nil {
			var data struct {
				Details string `json:"details"`
			}
			if json.Unmarshal(m.Error.Data, &data); data.Details == "" {
				t.Errorf("%s: error.data.details is empty (data %s)", name, m.Error.Data)
			}
		}
		s.stillUsable(t)
	}
}

func TestPromptForUnknownSessionIsAnError(t *testing.T) {
	s := startCorvid(t, text("x", 0), testkit.Options{})
	s.ready(t, testkit.Zed())
	p := s.CallAsync("session/prompt", testkit.TextPrompt("sess_nope", "hi"))
	m, err := s.NextResponse(s.ctx, json.RawMessage(p.ID))
	if err != nil {
		t.Fatal(err)
	}
	if m.Error == nil {
		t.Errorf("prompt for an unknown session succeeded: %s", m.Result)
	}
	s.stillUsable(t)
}

func TestUnknownNotificationsAreIgnored(t *testing.T) {
	s := startCorvid(t, text("x", 0), testkit.Options{})
	s.ready(t, testkit.Zed())
	before := len(s.Transcript())
	s.Notify("_corvid.dev/whatever", map[string]any{"x": 1})
	s.Notify("session/explode", map[string]any{})
	s.Notify("$/cancel_request", map[string]any{"requestId": 999})
	s.Notify("initialized", map[string]any{})
	s.stillUsable(t)
	// Only the answer to stillUsable's request may follow; corvid's own
	// session/update notifications (the command list after session/new)
	// are not answers.
	var got []string
	for _, l := range s.Transcript()[before:] {
		if l.Dir == testkit.FromAgent && !strings.Contains(l.Text, `"method":"session/update"`) {
			got = append(got, l.Text)
		}
	}
	if len(got) != 1 {
		t.Errorf("notifications were answered; agent lines after them:\n%q", got)
	}
}

func TestStringAndLargeIDsAreEchoed(t *testing.T) {
	s := startCorvid(t, text("x", 0), testkit.Options{IDs: testkit.IDsString})
	s.ready(t, testkit.Zed())
	s.Send(`{"jsonrpc":"2.0","id":9007199254740993,"method":"session/new","params":{"cwd":"` + s.workspace + `","mcpServers":[]}}`)
	m, err := s.NextResponse(s.ctx, json.RawMessage("9007199254740993"))
	if err != nil || m.Error != nil {
		t.Errorf("large integer id: %+v %v", m, err)
	}
}

// Old Gas City sends session/new with no params at all; corvid serves the launch dir.
func TestOldGasCitySessionNewWithoutParams(t *testing.T) {
	s := startCorvid(t, text("hello gas city", 0), testkit.Options{NeverAnswer: true})
	if _, rerr := s.Initialize(s.ctx, testkit.OldGasCity()); rerr != nil {
		t.Fatal(rerr)
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	s.MustCall(s.ctx, "session/new", nil, &res)
	if res.SessionID == "" {
		t.Fatal("no session id")
	}
	if stop, rerr := s.Prompt(s.ctx, res.SessionID, "hi"); rerr != nil || stop != "end_turn" {
		t.Errorf("prompt: %q %v", stop, rerr)
	}
}
