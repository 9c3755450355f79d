package testkit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestKillStopsTheAgentAtOnce(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.MustCall(ctx, "_fake/ignore_eof", nil, nil)
	start := time.Now()
	e.Kill()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("kill took %v", took)
	}
	if code := e.ExitCode(); code != -1 {
		t.Errorf("exit code after SIGKILL %d, want -1", code)
	}
	rec.expectNone(t)
}

func TestNextRawAndRawRequests(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.Send(`{"jsonrpc":"2.0","id":"raw-1","method":"session/list","params":{}}`)
	e.Send(`this is not json`)
	first, err := e.NextRaw(ctx)
	if err != nil || !strings.Contains(first.Text, `"raw-1"`) {
		t.Fatalf("first raw line %v %v", first, err)
	}
	second, err := e.NextRaw(ctx)
	if err != nil || !strings.Contains(second.Text, `-32700`) {
		t.Fatalf("second raw line %v %v", second, err)
	}
	// The raw request was noted, so its schema-invalid result was caught.
	rec.expectOne(t, "result of session/list")
	m, err := e.NextResponse(ctx, "raw-1")
	if err != nil || m.Seq != first.Seq {
		t.Errorf("NextResponse(raw-1) = %+v %v", m, err)
	}
	e.Close()
	if _, err := e.NextRaw(ctx); err == nil {
		t.Error("NextRaw after EOF returned a line")
	}
}

func TestElicitationNeedsItsMode(t *testing.T) {
	form := map[string]any{"sessionId": "s", "mode": "form", "message": "Name?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}

	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Zed())
	if r := agentCall(t, ctx, e, "elicitation/create", form); r.Error == nil {
		t.Errorf("form elicitation without the capability answered %s", r.Raw)
	}
	rec.expectOne(t, "elicitation.form")

	h := Minimal()
	h.Params["clientCapabilities"] = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	e, rec, ctx = startFake(t, Options{Elicitation: func(_ context.Context, params json.RawMessage) (any, error) {
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
	}})
	e.Initialize(ctx, h)
	r := agentCall(t, ctx, e, "elicitation/create", form)
	if err := ValidateDef("CreateElicitationResponse", r.Result); err != nil || !strings.Contains(string(r.Result), "Ada") {
		t.Errorf("elicitation answer %s: %v", r.Raw, err)
	}
	rec.expectNone(t)
}

func TestAgentCancelRequestCancelsAHeldPermission(t *testing.T) {
	e, rec, ctx := startFake(t, Options{Permission: HoldPermission(nil, AllowOnce())})
	e.Initialize(ctx, Zed())
	p := e.CallAsync("_fake/call", map[string]any{"method": "session/request_permission", "params": permParams})
	if _, err := e.WaitPermission(ctx); err != nil {
		t.Fatal(err)
	}
	// The fake agent's first call has id "fa-1".
	say(t, ctx, e, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"fa-1"}}`)
	res, _ := p.Wait(ctx)
	var r struct{ Response json.RawMessage }
	json.Unmarshal(res, &r)
	m, _ := decodeMessage(r.Response)
	if got := outcome(t, m); got != "cancelled:" {
		t.Errorf("outcome %s", got)
	}
	rec.expectNone(t)
}
