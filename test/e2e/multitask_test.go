package e2e

// The multitask option's protocol surface (C41–C63; docs/codebuddy.md):
// discovery, the standard write and CodeBuddy's session/set_multitask,
// validation, persistence, ownership, /multitask and --multitask. The
// detached workers and drain turns it enables are in workers_test.go.

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// The option exactly as CodeBuddy's documentation gives it (C47).
const multitaskOptionJSON = `{"type":"boolean","id":"multitask","name":"Multitask","description":"Coordinate detached workers while keeping the current agent mode","category":"_codebuddy.ai/multitask","currentValue":false}`

// rawOption returns the option id of a configOptions array, as JSON.
func rawOption(t *testing.T, raw json.RawMessage, id string) (map[string]any, bool) {
	t.Helper()
	var res struct {
		ConfigOptions []map[string]any `json:"configOptions"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	for _, o := range res.ConfigOptions {
		if o["id"] == id {
			return o, true
		}
	}
	return nil, false
}

func multitaskValue(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	o, ok := rawOption(t, raw, "multitask")
	if !ok {
		t.Fatalf("no multitask option in %s", raw)
	}
	return o["currentValue"]
}

func TestMultitaskOptionIsOfferedWrittenAndStored(t *testing.T) {
	st := newSharedHome(t, text("hello", 0))
	a := st.start(t, testkit.BooleanOptions())
	raw := a.MustCall(a.ctx, "session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{}}, nil)
	var want map[string]any
	_ = json.Unmarshal([]byte(multitaskOptionJSON), &want)
	got, ok := rawOption(t, raw, "multitask")
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !ok || string(gotJSON) != string(wantJSON) {
		t.Errorf("session/new multitask option = %s, want %s", gotJSON, wantJSON)
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(raw, &created)
	sid := created.SessionID
	a.roundTrip(t)

	// C51, C55: only a JSON boolean; the reason is in data.details.
	for _, bad := range []any{"true", 1, nil, map[string]any{}} {
		_, rerr := a.Call(a.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": bad})
		if rerr == nil || rerr.Code != -32602 || !strings.Contains(rpcDetails(rerr), "JSON true or false") {
			t.Errorf("multitask value %#v: got %+v, want -32602 with details", bad, rerr)
		}
	}

	// C50, C52, C53: the write answers the whole set and a
	// config_option_update follows with it; mode stays (C42).
	before := len(a.Updates(sid))
	raw, rerr := a.Call(a.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": true})
	if rerr != nil {
		t.Fatalf("set multitask true: %v", rerr)
	}
	if v := multitaskValue(t, raw); v != true {
		t.Errorf("set_config_option answered currentValue %v, want true", v)
	}
	if m, _ := rawOption(t, raw, "mode"); m["currentValue"] != "default" {
		t.Errorf("mode after multitask on: %v, want default unchanged", m["currentValue"])
	}
	a.roundTrip(t)
	ups := a.Updates(sid)[before:]
	cu := testkit.OfKind(ups, "config_option_update")
	if len(cu) != 1 || multitaskValue(t, cu[0].Raw) != true {
		t.Errorf("after the write: %d config_option_update, want 1 with multitask true", len(cu))
	} else {
		var answered struct {
			ConfigOptions []ctlOption `json:"configOptions"`
		}
		_ = json.Unmarshal(raw, &answered)
		if got, want := optionIDList(configUpdates(cu)[0]), optionIDList(answered.ConfigOptions); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("config_option_update carries options %v, want the full set %v", got, want)
		}
	}
	if n := len(testkit.OfKind(ups, "current_mode_update")); n != 0 {
		t.Errorf("multitask changed the mode (%d current_mode_update)", n)
	}

	// C57–C62: the dialect method shares it.
	var res struct {
		OK, On, Already bool
		AgentName       string
		Message         string
	}
	a.MustCall(a.ctx, "session/set_multitask", map[string]any{"sessionId": sid, "enabled": true}, &res)
	if !res.OK || !res.On || !res.Already || res.AgentName == "" || res.Message == "" {
		t.Errorf("set_multitask enabled=true on an enabled session = %+v, want ok, on, already", res)
	}
	res = struct {
		OK, On, Already bool
		AgentName       string
		Message         string
	}{}
	a.MustCall(a.ctx, "session/set_multitask", map[string]any{"sessionId": sid}, &res)
	if !res.OK || res.On || res.Already {
		t.Errorf("set_multitask without enabled (toggle) = %+v, want ok, off, not already", res)
	}
	for _, bad := range []any{"true", 1} {
		if _, rerr := a.Call(a.ctx, "session/set_multitask", map[string]any{"sessionId": sid, "enabled": bad}); rerr == nil || rerr.Code != -32602 || rpcDetails(rerr) == "" {
			t.Errorf("set_multitask enabled=%#v: %+v, want -32602 with details", bad, rerr)
		}
	}
	a.MustCall(a.ctx, "_session/set_multitask", map[string]any{"sessionId": sid, "enabled": true}, &res)
	if !res.OK || !res.On {
		t.Errorf("_session/set_multitask (extMethod's prefix) = %+v", res)
	}

	// C56: another connection (a second corvid on the same store) does not
	// own the session: its write is refused until it loads the session.
	b := st.start(t, testkit.BooleanOptions())
	_, rerr = b.Call(b.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": false})
	if rerr == nil || rerr.Code != -32602 {
		t.Errorf("a write from another connection = %+v, want -32602", rerr)
	}
	// The dialect answers ok: false for a session this connection does
	// not serve (CodeBuddy clients read ok).
	res = struct {
		OK, On, Already bool
		AgentName       string
		Message         string
	}{OK: true}
	b.MustCall(b.ctx, "session/set_multitask", map[string]any{"sessionId": sid, "enabled": false}, &res)
	if res.OK || !strings.Contains(res.Message, "Unknown session") {
		t.Errorf("set_multitask from another connection = %+v, want ok: false naming the unknown session", res)
	}
	// Loading it there takes it over: B's write succeeds, A's is refused
	// until A loads it again.
	b.MustCall(b.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}}, nil)
	if _, rerr := b.Call(b.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": false}); rerr != nil {
		t.Errorf("a write from the connection that loaded the session: %v", rerr)
	}
	_, rerr = a.Call(a.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": true})
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(rpcDetails(rerr), "owned by another connection") {
		t.Errorf("a write from the connection that lost the session = %+v, want -32602 naming the owner rule", rerr)
	}
	_, rerr = a.Call(a.ctx, "session/set_multitask", map[string]any{"sessionId": sid, "enabled": true})
	if rerr == nil || rerr.Code != -32602 {
		t.Errorf("set_multitask from the connection that lost the session = %+v, want -32602", rerr)
	}
	// C86: codeMode writes follow the same rule.
	_, rerr = a.Call(a.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "codeMode", "value": "off"})
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(rpcDetails(rerr), "owned by another connection") {
		t.Errorf("a codeMode write from the connection that lost the session = %+v, want -32602 naming the owner rule", rerr)
	}
	b.Close()
	a.MustCall(a.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}}, nil)
	if _, rerr := a.Call(a.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": true}); rerr != nil {
		t.Errorf("a write after loading the session back: %v", rerr)
	}
	a.Close()

	// Stored with the session: load and resume show it on (C47).
	c := st.start(t, testkit.BooleanOptions())
	raw = c.MustCall(c.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}}, nil)
	if v := multitaskValue(t, raw); v != true {
		t.Errorf("session/load multitask = %v, want the stored true", v)
	}
	c.Close()
	d := st.start(t, testkit.BooleanOptions())
	raw = d.MustCall(d.ctx, "session/resume", map[string]any{"sessionId": sid, "cwd": st.workspace}, nil)
	if v := multitaskValue(t, raw); v != true {
		t.Errorf("session/resume multitask = %v, want true", v)
	}
}

// With background tasks disabled nothing offers multitask (C45, C48) and
// both writes are refused: -32602 with details, or ok: false (C55, C60).
func TestMultitaskIsWithheldWhenBackgroundTasksAreDisabled(t *testing.T) {
	st := newSharedHome(t, text("hello", 0))
	a := st.startArgs(t, testkit.Minimal(), []string{"CORVID_DISABLE_BACKGROUND_TASKS=1"}, "acp", "-m", "script:"+st.script, "--compat", "codebuddy")
	init := a.Transcript()
	for _, l := range init {
		if strings.Contains(l.Text, "multitaskSupport") {
			t.Errorf("initialize advertises multitask with background tasks disabled: %s", l.Text)
		}
	}
	raw := a.MustCall(a.ctx, "session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{}}, nil)
	if _, ok := rawOption(t, raw, "multitask"); ok {
		t.Errorf("session/new offers multitask with background tasks disabled")
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(raw, &created)
	_, rerr := a.Call(a.ctx, "session/set_config_option", map[string]any{"sessionId": created.SessionID, "configId": "multitask", "type": "boolean", "value": true})
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(rpcDetails(rerr), "background tasks are disabled") {
		t.Errorf("write with background tasks disabled = %+v, want -32602 naming the reason", rerr)
	}
	var res struct {
		OK, On  bool
		Message string
	}
	a.MustCall(a.ctx, "session/set_multitask", map[string]any{"sessionId": created.SessionID, "enabled": true}, &res)
	if res.OK || res.On || !strings.Contains(res.Message, "background tasks are disabled") {
		t.Errorf("set_multitask with background tasks disabled = %+v, want ok false with the reason", res)
	}
}

// /multitask stamps the same way (C63, C95), without a model call.
func TestMultitaskSlashCommand(t *testing.T) {
	st := newSharedHome(t, map[string]any{"responses": []any{}})
	a := st.start(t, testkit.BooleanOptions())
	sid := a.NewSession(a.ctx, st.workspace)
	u, err := a.WaitUpdate(a.ctx, testkit.Kind(sid, "available_commands_update"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range commandsOf(u) {
		found = found || c.Name == "multitask"
	}
	if !found {
		t.Errorf("/multitask is not in the command list %v", names(commandsOf(u)))
	}
	ups := a.turn(t, sid, "/multitask on", "end_turn")
	if !strings.Contains(testkit.TextOf(ups, "agent_message_chunk"), "Multitask is now on.") {
		t.Errorf("/multitask on said %q", testkit.TextOf(ups, "agent_message_chunk"))
	}
	a.roundTrip(t)
	cu := testkit.OfKind(a.Updates(sid), "config_option_update")
	if len(cu) == 0 || multitaskValue(t, cu[len(cu)-1].Raw) != true {
		t.Errorf("/multitask on sent no config_option_update with multitask true")
	}
	var res struct{ OK, On, Already bool }
	a.MustCall(a.ctx, "session/set_multitask", map[string]any{"sessionId": sid, "enabled": true}, &res)
	if !res.Already {
		t.Errorf("after /multitask on, set_multitask true = %+v, want already", res)
	}
}

// --multitask (and --agent multitask) with acp is CodeBuddy's entry guard:
// exit non-zero with a message (C41).
func TestMultitaskFlagIsRefusedWithACP(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	for _, args := range [][]string{{"acp", "--multitask"}, {"--acp", "--multitask"}, {"acp", "--agent", "multitask"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = testkit.IsolatedEnvAt(t.TempDir())
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(string(out), "multitask is set per session") {
			t.Errorf("corvid %s: err %v, output %q; want a non-zero exit explaining it", strings.Join(args, " "), err, out)
		}
	}
}

// TestSetMultitaskOnAChildOrUnknownSessionAnswersNotOK: CodeBuddy's
// document says a worker or child session returns ok: false, and its
// clients read ok. A sub-agent's session id, and an id nobody knows, get
// ok: false with a message saying why; malformed params stay -32602.
func TestSetMultitaskOnAChildOrUnknownSessionAnswersNotOK(t *testing.T) {
	child := childModel(t, textResponse("child's answer", 1, 1))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{taskCall("t1", "alice", "look", "Look around", child)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "done"}}},
	}}
	s := startCorvid(t, parent, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	var childID string
	for _, u := range s.Updates(sid) {
		if sub, ok := meta(u)["corvid.dev/subagent"].(map[string]any); ok {
			childID, _ = sub["id"].(string)
		}
	}
	if childID == "" {
		t.Fatal("no update names the sub-agent's session id")
	}
	type answer struct {
		OK        *bool  `json:"ok"`
		AgentName string `json:"agentName"`
		Message   string `json:"message"`
	}
	for _, c := range []struct{ id, want string }{
		{childID, "child session of " + sid},
		{"sess_nobody", "Unknown session"},
	} {
		var res answer
		s.MustCall(s.ctx, "session/set_multitask", map[string]any{"sessionId": c.id, "enabled": true}, &res)
		if res.OK == nil || *res.OK || !strings.Contains(res.Message, c.want) {
			t.Errorf("set_multitask on %s = %+v, want ok: false with a message containing %q", c.id, res, c.want)
		}
	}
	for _, bad := range []map[string]any{{"enabled": true}, {"sessionId": childID, "enabled": "yes"}} {
		if _, rerr := s.Call(s.ctx, "session/set_multitask", bad); rerr == nil || rerr.Code != -32602 {
			t.Errorf("set_multitask %v: %+v, want -32602 for malformed params", bad, rerr)
		}
	}
	// The standard write keeps -32602 for a session it does not serve.
	if _, rerr := s.Call(s.ctx, "session/set_config_option", map[string]any{"sessionId": childID, "configId": "multitask", "type": "boolean", "value": true}); rerr == nil || rerr.Code != -32602 {
		t.Errorf("set_config_option on a child session: %+v, want -32602", rerr)
	}
}
