package e2e

// CodeBuddy's codeMode option (seed requirements C77–C90), through the
// built binary: its exact shape in new/load/resume, the capability flag,
// writes (valid, invalid, locked, idempotent), the initial value from
// session/new's _meta, and that it is stored with the session.

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// codeModeC80 is the option as seed requirement C80 gives it, verbatim.
const codeModeC80 = `{"type":"select","id":"codeMode","name":"Code Mode","description":"Tool-calling mode for this session. Locked after the first agent reply.","category":"_codebuddy.ai/codeMode","currentValue":"off","options":[{"value":"off","name":"Standard"},{"value":"all","name":"PTC (All tools)"}]}`

// mustOption finds the option id in a result's raw configOptions.
func mustOption(t *testing.T, result json.RawMessage, id string) map[string]any {
	t.Helper()
	o, ok := rawOption(t, result, id)
	if !ok {
		t.Fatalf("no %s option in %s", id, result)
	}
	return o
}

// wantC80 checks the option equals C80's JSON with currentValue current.
func wantC80(t *testing.T, what string, got map[string]any, current string) {
	t.Helper()
	var want map[string]any
	_ = json.Unmarshal([]byte(codeModeC80), &want)
	want["currentValue"] = current
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Errorf("%s: codeMode option\n got %s\nwant %s (C80, currentValue %q)", what, g, codeModeC80, current)
	}
}

// wantInvalid checks an error is -32602 with details containing want.
func wantInvalid(t *testing.T, what string, rerr *testkit.RPCError, want string) {
	t.Helper()
	if rerr == nil {
		t.Errorf("%s: accepted, want -32602", what)
		return
	}
	var data struct {
		Details string `json:"details"`
	}
	_ = json.Unmarshal(rerr.Data, &data)
	if rerr.Code != -32602 || data.Details == "" || !strings.Contains(data.Details, want) {
		t.Errorf("%s: error %d %q details %q, want -32602 with details containing %q", what, rerr.Code, rerr.Message, data.Details, want)
	}
}

func TestCodeModeIsAdvertisedAndOfferedExactlyAsC80InNewLoadAndResume(t *testing.T) {
	st := newSharedHome(t, text("hello", 0))
	a := &session{Editor: testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: []string{"acp", "-m", "script:" + st.script},
		Dir: st.workspace, Env: []string{"CORVID_HOME=" + st.home}}), ctx: t.Context(), workspace: st.workspace}
	// The capability flag (C79), in _meta so the frame stays schema-exact.
	init, rerr := a.Initialize(a.ctx, testkit.Minimal())
	if rerr != nil {
		t.Fatal(rerr)
	}
	var caps struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(init.AgentCapabilities, &caps)
	if caps.Meta["codebuddy.ai/codeModeSupport"] != true {
		t.Errorf("agentCapabilities %s: want _meta[\"codebuddy.ai/codeModeSupport\"] true", init.AgentCapabilities)
	}
	raw, rerr := a.Call(a.ctx, "session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	wantC80(t, "session/new", mustOption(t, raw, "codeMode"), "off")
	var created struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(raw, &created)
	sid := created.SessionID
	a.turn(t, sid, "hi", "end_turn")
	a.Close()

	b := st.start(t, testkit.Minimal())
	raw, rerr = b.Call(b.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	wantC80(t, "session/load", mustOption(t, raw, "codeMode"), "off")
	raw, rerr = b.Call(b.ctx, "session/resume", map[string]any{"sessionId": sid, "cwd": st.workspace})
	if rerr != nil {
		t.Fatal(rerr)
	}
	wantC80(t, "session/resume", mustOption(t, raw, "codeMode"), "off")
}

func TestCodeModeWritesAreCheckedAndLockAfterTheFirstAgentReply(t *testing.T) {
	s := startCorvid(t, text("a reply", 0), testkit.Options{})
	sid := s.ready(t, testkit.Minimal())

	// A blank session: all, back to off, then all again; each answered
	// with the whole set and pushed once.
	for _, v := range []string{"all", "off", "all"} {
		before := len(s.Updates(sid))
		opts, rerr := s.setOption(t, sid, "codeMode", v)
		if rerr != nil {
			t.Fatalf("set codeMode=%s on a blank session: %v", v, rerr)
		}
		if got := currentValues(opts)["codeMode"]; got != v {
			t.Errorf("set codeMode=%s answered %q", v, got)
		}
		s.roundTrip(t)
		ups := configUpdates(s.Updates(sid)[before:])
		if len(ups) != 1 || currentValues(ups[0])["codeMode"] != v {
			t.Errorf("set codeMode=%s pushed %v, want one config_option_update with codeMode %s", v, ups, v)
		}
	}
	// Invalid values (C83), legacy names included (C88).
	for _, v := range []any{"mcp", "ALL", "", true} {
		_, rerr := s.setOption(t, sid, "codeMode", v)
		wantInvalid(t, "set codeMode="+string(mustJSON(v)), rerr, "")
	}

	s.turn(t, sid, "hi", "end_turn")
	// Locked (C84): a different value is refused with "codeMode locked".
	_, rerr := s.setOption(t, sid, "codeMode", "off")
	wantInvalid(t, "set codeMode=off after the first reply", rerr, "codeMode locked")
	// The current value stays an idempotent success (C85).
	before := len(s.Updates(sid))
	opts, rerr := s.setOption(t, sid, "codeMode", "all")
	if rerr != nil {
		t.Fatalf("replaying the current value after the lock: %v", rerr)
	}
	if got := currentValues(opts)["codeMode"]; got != "all" {
		t.Errorf("replay answered codeMode %q, want all", got)
	}
	s.roundTrip(t)
	if ups := configUpdates(s.Updates(sid)[before:]); len(ups) != 1 || currentValues(ups[0])["codeMode"] != "all" {
		t.Errorf("replay pushed %v", ups)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestCodeModeInitialValueComesFromSessionNewMeta(t *testing.T) {
	s := startCorvid(t, text("unused", 0), testkit.Options{})
	if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
		t.Fatal(rerr)
	}
	newWith := func(v any) (json.RawMessage, *testkit.RPCError) {
		return s.Call(s.ctx, "session/new", map[string]any{"cwd": s.workspace, "mcpServers": []any{},
			"_meta": map[string]any{"codebuddy.ai/codeMode": v}})
	}
	for v, want := range map[string]string{"all": "all", "off": "off"} {
		raw, rerr := newWith(v)
		if rerr != nil {
			t.Fatalf("session/new with codeMode %q: %v", v, rerr)
		}
		wantC80(t, "session/new with _meta codeMode "+v, mustOption(t, raw, "codeMode"), want)
	}
	for _, v := range []any{"mcp", "All", "", 1} {
		_, rerr := newWith(v)
		wantInvalid(t, "session/new with _meta codeMode "+string(mustJSON(v)), rerr, "codebuddy.ai/codeMode")
	}
	s.stillUsable(t)
}

func TestCodeModeIsStoredWithTheSessionAndRestoredOnLoad(t *testing.T) {
	st := newSharedHome(t, text("hello", 0))
	a := st.start(t, testkit.Minimal())
	var created ctlSetup
	a.MustCall(a.ctx, "session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{},
		"_meta": map[string]any{"codebuddy.ai/codeMode": "all"}}, &created)
	viaMeta := created.SessionID
	blank := a.newSetup(t).SessionID
	if _, rerr := a.setOption(t, blank, "codeMode", "all"); rerr != nil {
		t.Fatal(rerr)
	}
	a.turn(t, viaMeta, "hi", "end_turn")
	a.Close()

	b := st.start(t, testkit.Minimal())
	for _, sid := range []string{viaMeta, blank} {
		loaded := b.callSetup(t, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}})
		if got := currentValues(loaded.ConfigOptions)["codeMode"]; got != "all" {
			t.Errorf("session %s loaded with codeMode %q, want all", sid, got)
		}
	}
	// The loaded session still has its reply: the lock holds after a restart.
	_, rerr := b.setOption(t, viaMeta, "codeMode", "off")
	wantInvalid(t, "set off on a loaded session with a reply", rerr, "codeMode locked")
}
