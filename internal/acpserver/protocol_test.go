package acpserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/corvid-agent/corvid/internal/acp"
)

// schemaPaths are where the repository keeps its copy of the official ACP
// v1 schema (the client kit's embedded copy).
var schemaPaths = []string{"../acpkit/schema/v1/schema.json", "../testkit/schema/v1/schema.json", "../conformance/schema/v1/schema.json"}

// TestEveryAgentMethodHasAHome checks the dispatcher against the official
// schema: each client→agent method is routed to Protocol or listed as
// unimplemented, and nothing is both.
func TestEveryAgentMethodHasAHome(t *testing.T) {
	var raw []byte
	for _, p := range schemaPaths {
		if b, err := os.ReadFile(p); err == nil {
			raw = b
			break
		}
	}
	if raw == nil {
		t.Fatalf("no ACP schema copy at any of %v", schemaPaths)
	}
	var schema struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for name, d := range schema.Defs {
		if d.Side != "agent" || d.Method == "" {
			continue
		}
		seen++
		_, req := requests[d.Method]
		_, note := notifications[d.Method]
		if !req && !note && !slices.Contains(unimplemented, d.Method) {
			t.Errorf("%s (%s) is neither routed nor listed as unimplemented", d.Method, name)
		}
	}
	if seen < 10 {
		t.Fatalf("found only %d agent methods in the schema; is x-side still there?", seen)
	}
	for _, m := range unimplemented {
		if _, ok := requests[m]; ok {
			t.Errorf("%s is both routed and listed as unimplemented", m)
		}
	}
}

// TestUnimplementedAndUnstoredMethodsAreNotFound: an unimplemented method,
// and a store-only method on a server without a store, answer -32601
// without reaching Protocol (nil here would panic).
func TestUnimplementedAndUnstoredMethodsAreNotFound(t *testing.T) {
	for _, m := range append(slices.Clone(unimplemented), "session/load", "session/list", "session/fork", "_corvid/unknown") {
		_, err := dispatchRequest(context.Background(), nil, false, m, nil)
		var e *acp.Error
		if !errors.As(err, &e) || e.Code != acp.CodeMethodNotFound {
			t.Errorf("%s: got %v, want -32601", m, err)
		}
	}
}

// TestParamsAreValidatedBeforeTheMethod: a request missing its sessionId
// is refused by the dispatcher with the documented -32602.
func TestParamsAreValidatedBeforeTheMethod(t *testing.T) {
	for _, m := range []string{"session/prompt", "session/close", "session/set_mode", "session/set_config_option", "session/load", "session/resume", "session/fork", "session/delete"} {
		_, err := dispatchRequest(context.Background(), nil, true, m, json.RawMessage(`{"cwd":"/"}`))
		var e *acp.Error
		if !errors.As(err, &e) || e.Code != acp.CodeInvalidParams || e.Data != (acp.Details{Details: "sessionId is required"}) {
			t.Errorf("%s: got %v, want -32602 sessionId is required", m, err)
		}
		_, err = dispatchRequest(context.Background(), nil, true, m, json.RawMessage(`[1]`))
		if !errors.As(err, &e) || e.Code != acp.CodeInvalidParams || e.Data != (acp.Details{Details: "params must be a JSON object"}) {
			t.Errorf("%s with an array: got %v, want -32602 params must be a JSON object", m, err)
		}
	}
}
