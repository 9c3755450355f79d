package e2e

// Session controls, through the built binary: the config options a session
// offers (model, mode, thought_level, context_window), how set_config_option
// and set_mode change them and keep the editor's pickers in step, what each
// permission mode does to a tool call, and that the mode outlives the process.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// ctlOption is a SessionConfigOption as the tests read it.
type ctlOption struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Category     string          `json:"category"`
	Type         string          `json:"type"`
	CurrentValue json.RawMessage `json:"currentValue"`
	Options      []struct {
		Value string `json:"value"`
		Name  string `json:"name"`
	} `json:"options"`
}

// current is the option's currentValue as a string ("" if it is not one).
func (o ctlOption) current() string {
	var s string
	_ = json.Unmarshal(o.CurrentValue, &s)
	return s
}

func (o ctlOption) values() []string {
	var out []string
	for _, v := range o.Options {
		out = append(out, v.Value)
	}
	return out
}

// ctlSetup is the result of session/new, session/load and session/resume.
type ctlSetup struct {
	SessionID     string      `json:"sessionId"`
	ConfigOptions []ctlOption `json:"configOptions"`
	Modes         *struct {
		CurrentModeID  string `json:"currentModeId"`
		AvailableModes []struct {
			ID string `json:"id"`
		} `json:"availableModes"`
	} `json:"modes"`
}

func optionOf(opts []ctlOption, id string) (ctlOption, bool) {
	for _, o := range opts {
		if o.ID == id {
			return o, true
		}
	}
	return ctlOption{}, false
}

func optionIDList(opts []ctlOption) []string {
	var ids []string
	for _, o := range opts {
		ids = append(ids, o.ID)
	}
	return ids
}

// currentValues maps each option id to its current value.
func currentValues(opts []ctlOption) map[string]string {
	m := map[string]string{}
	for _, o := range opts {
		m[o.ID] = o.current()
	}
	return m
}

// callSetup calls session/new, session/load or session/resume and decodes the result.
func (s *session) callSetup(t *testing.T, method string, params map[string]any) ctlSetup {
	t.Helper()
	var res ctlSetup
	s.MustCall(s.ctx, method, params, &res)
	return res
}

func (s *session) newSetup(t *testing.T) ctlSetup {
	t.Helper()
	return s.callSetup(t, "session/new", map[string]any{"cwd": s.workspace, "mcpServers": []any{}})
}

// roundTrip makes sure every frame the agent wrote before now has been read:
// the agent's writer is ordered, so a response to a later request comes after them.
func (s *session) roundTrip(t *testing.T) {
	t.Helper()
	s.MustCall(s.ctx, "session/list", map[string]any{}, nil)
}

// setOption calls session/set_config_option with a value id and returns the answered set.
func (s *session) setOption(t *testing.T, sid, id string, value any) ([]ctlOption, *testkit.RPCError) {
	t.Helper()
	raw, rerr := s.Call(s.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": id, "value": value})
	if rerr != nil {
		return nil, rerr
	}
	var res struct {
		ConfigOptions []ctlOption `json:"configOptions"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("set_config_option result %s: %v", raw, err)
	}
	return res.ConfigOptions, nil
}

// configUpdates decodes the config_option_update notifications among ups.
func configUpdates(ups []testkit.Update) [][]ctlOption {
	var out [][]ctlOption
	for _, u := range testkit.OfKind(ups, "config_option_update") {
		var p struct {
			ConfigOptions []ctlOption `json:"configOptions"`
		}
		_ = json.Unmarshal(u.Raw, &p)
		out = append(out, p.ConfigOptions)
	}
	return out
}

// modeUpdates lists the currentModeId of every current_mode_update among ups.
func modeUpdates(ups []testkit.Update) []string {
	var out []string
	for _, u := range testkit.OfKind(ups, "current_mode_update") {
		var p struct {
			CurrentModeID string `json:"currentModeId"`
		}
		_ = json.Unmarshal(u.Raw, &p)
		out = append(out, p.CurrentModeID)
	}
	return out
}

// checkScriptOptions checks the option set of a session on the script model
// (which reasons and has a single context window).
func checkScriptOptions(t *testing.T, what string, res ctlSetup, wantMode string) {
	t.Helper()
	if got := optionIDList(res.ConfigOptions); !slices.Equal(got, []string{"model", "mode", "thought_level", "codeMode", "multitask"}) {
		t.Errorf("%s: config options %v, want [model mode thought_level codeMode multitask] (no context_window for a single-window model)", what, got)
	}
	model, ok := optionOf(res.ConfigOptions, "model")
	switch {
	case !ok:
		t.Errorf("%s: no model option", what)
	case model.Category != "model" || model.Type != "select":
		t.Errorf("%s: model option category %q type %q, want model/select", what, model.Category, model.Type)
	case !strings.HasPrefix(model.current(), "script:") || !slices.Contains(model.values(), model.current()):
		t.Errorf("%s: model currentValue %s among %v, want the script model, selectable", what, model.CurrentValue, model.values())
	}
	mode, ok := optionOf(res.ConfigOptions, "mode")
	switch {
	case !ok:
		t.Errorf("%s: no mode option", what)
	case mode.Category != "mode" || mode.Type != "select":
		t.Errorf("%s: mode option category %q type %q, want mode/select", what, mode.Category, mode.Type)
	case mode.current() != wantMode:
		t.Errorf("%s: mode currentValue %s, want %q", what, mode.CurrentValue, wantMode)
	case !slices.Equal(mode.values(), []string{"ask", "default", "edit", "plan", "yolo", "deny"}):
		t.Errorf("%s: mode values %v", what, mode.values())
	}
	if th, ok := optionOf(res.ConfigOptions, "thought_level"); ok {
		if th.Category != "thought_level" || th.current() == "" || !slices.Contains(th.values(), th.current()) {
			t.Errorf("%s: thought_level option %+v: want category thought_level and a current value among its values", what, th)
		}
	}
	if res.Modes == nil || res.Modes.CurrentModeID != wantMode {
		t.Errorf("%s: modes %+v, want currentModeId %q", what, res.Modes, wantMode)
	}
}

func TestConfigOptionsAreInNewLoadAndResumeResponses(t *testing.T) {
	st := newSharedHome(t, text("hello", 0))
	a := st.start(t, testkit.BooleanOptions())
	created := a.newSetup(t)
	checkScriptOptions(t, "session/new", created, "default")
	sid := created.SessionID
	a.turn(t, sid, "hi", "end_turn")
	a.Close()

	b := st.start(t, testkit.BooleanOptions())
	loaded := b.callSetup(t, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}})
	checkScriptOptions(t, "session/load", loaded, "default")
	b.Close()

	c := st.start(t, testkit.BooleanOptions())
	resumed := c.callSetup(t, "session/resume", map[string]any{"sessionId": sid, "cwd": st.workspace})
	checkScriptOptions(t, "session/resume", resumed, "default")
}

// startOnAPI serves corvid on the fake Anthropic API with model (an
// anthropic model id), in workspace, with CORVID_HOME home when it is not "".
func startOnAPI(t *testing.T, api *fakeanthropic.Server, model, workspace, home string, extra ...string) *session {
	t.Helper()
	env := []string{"ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off"}
	if home != "" {
		env = append(env, "CORVID_HOME="+home)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{
		Args: append([]string{"acp", "-m", "anthropic:" + model}, extra...),
		Env:  env,
		Dir:  workspace,
	})
	s := &session{Editor: e, ctx: ctx, workspace: workspace}
	if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	return s
}

func TestContextWindowIsOfferedOnlyForAModelWithTwoTiers(t *testing.T) {
	api := fakeanthropic.New(t)
	s := startOnAPI(t, api, "claude-sonnet-4-6", t.TempDir(), "")
	res := s.newSetup(t)
	sid := res.SessionID
	cw, ok := optionOf(res.ConfigOptions, "context_window")
	if !ok {
		t.Fatalf("claude-sonnet-4-6 (tiers 200000 and 1000000) offers %v, want a context_window option", optionIDList(res.ConfigOptions))
	}
	if !slices.Equal(cw.values(), []string{"200000", "1000000"}) || cw.current() != "200000" {
		t.Errorf("context_window values %v current %s, want [200000 1000000] current 200000", cw.values(), cw.CurrentValue)
	}
	if _, ok := optionOf(res.ConfigOptions, "thought_level"); !ok {
		t.Errorf("a reasoning model offers %v, want thought_level", optionIDList(res.ConfigOptions))
	}
	if m, _ := optionOf(res.ConfigOptions, "model"); m.current() != "anthropic:claude-sonnet-4-6" || !slices.Contains(m.values(), "anthropic:claude-haiku-4-5") {
		t.Errorf("model option current %s values %v, want anthropic:claude-sonnet-4-6 with haiku selectable", m.CurrentValue, m.values())
	}

	// The larger tier, then another model: its single window drops the option.
	before := len(s.Updates(sid))
	opts, rerr := s.setOption(t, sid, "context_window", "1000000")
	if rerr != nil {
		t.Fatalf("set context_window 1000000: %v", rerr)
	}
	if got := currentValues(opts)["context_window"]; got != "1000000" {
		t.Errorf("after set context_window the answer says %q", got)
	}
	opts, rerr = s.setOption(t, sid, "model", "anthropic:claude-haiku-4-5")
	if rerr != nil {
		t.Fatalf("set model haiku: %v", rerr)
	}
	if got := currentValues(opts); got["model"] != "anthropic:claude-haiku-4-5" {
		t.Errorf("after set model the answer's model is %q", got["model"])
	}
	if _, ok := optionOf(opts, "context_window"); ok {
		t.Errorf("claude-haiku-4-5 has one context window, yet the set after switching offers context_window: %v", optionIDList(opts))
	}
	s.roundTrip(t)
	ups := configUpdates(s.Updates(sid)[before:])
	if len(ups) != 2 {
		t.Fatalf("%d config_option_update for two changes, want 2", len(ups))
	}
	if currentValues(ups[0])["context_window"] != "1000000" || currentValues(ups[1])["model"] != "anthropic:claude-haiku-4-5" {
		t.Errorf("config_option_update sets %v then %v", currentValues(ups[0]), currentValues(ups[1]))
	}

	// A session started on the single-window model never offers it.
	res2 := startOnAPI(t, api, "claude-haiku-4-5", t.TempDir(), "").newSetup(t)
	if _, ok := optionOf(res2.ConfigOptions, "context_window"); ok {
		t.Errorf("claude-haiku-4-5 (one window) offers context_window: %v", optionIDList(res2.ConfigOptions))
	}
	if len(api.Requests()) != 0 {
		t.Errorf("setting options called the model %d times", len(api.Requests()))
	}
}

func TestSetConfigOptionAnswersTheWholeSetAndPushesIt(t *testing.T) {
	s := startCorvid(t, text("unused", 0), testkit.Options{})
	if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
		t.Fatal(rerr)
	}
	created := s.newSetup(t)
	sid := created.SessionID
	want := currentValues(created.ConfigOptions)

	for _, c := range []struct{ id, value string }{
		{"mode", "edit"},
		{"thought_level", "high"},
		{"model", want["model"]}, // the script model is the only choice
		{"thought_level", "off"},
	} {
		before := len(s.Updates(sid))
		opts, rerr := s.setOption(t, sid, c.id, c.value)
		if rerr != nil {
			t.Errorf("set %s=%s: %v", c.id, c.value, rerr)
			continue
		}
		want[c.id] = c.value
		if got := currentValues(opts); !mapsEqual(got, want) {
			t.Errorf("set %s=%s answered %v, want the complete set %v", c.id, c.value, got, want)
		}
		s.roundTrip(t)
		ups := configUpdates(s.Updates(sid)[before:])
		if len(ups) != 1 {
			t.Errorf("set %s=%s: %d config_option_update, want 1 with the full set", c.id, c.value, len(ups))
			continue
		}
		if got := currentValues(ups[0]); !mapsEqual(got, want) {
			t.Errorf("set %s=%s pushed %v, want %v", c.id, c.value, got, want)
		}
	}

	// Rejections: -32602 with the reason in data.details, and nothing changes.
	before := len(s.Updates(sid))
	for _, c := range []struct {
		name   string
		params map[string]any
	}{
		{"unknown option", map[string]any{"configId": "turbo", "value": "on"}},
		{"unknown value", map[string]any{"configId": "mode", "value": "reckless"}},
		{"unknown thought level", map[string]any{"configId": "thought_level", "value": "extreme"}},
		{"unknown model", map[string]any{"configId": "model", "value": "script:nope"}},
		{"JSON boolean for a select option", map[string]any{"configId": "mode", "value": true}},
		{"boolean type", map[string]any{"configId": "mode", "type": "boolean", "value": true}},
	} {
		c.params["sessionId"] = sid
		_, rerr := s.Call(s.ctx, "session/set_config_option", c.params)
		if rerr == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if rerr.Code != -32602 {
			t.Errorf("%s: error %d %q, want -32602", c.name, rerr.Code, rerr.Message)
		}
		var data struct {
			Details string `json:"details"`
		}
		if json.Unmarshal(rerr.Data, &data) != nil || strings.TrimSpace(data.Details) == "" {
			t.Errorf("%s: error data %s, want data.details saying why", c.name, rerr.Data)
		}
	}
	s.roundTrip(t)
	if n := len(configUpdates(s.Updates(sid)[before:])); n != 0 {
		t.Errorf("rejected changes pushed %d config_option_update", n)
	}
	now := s.callSetup(t, "session/resume", map[string]any{"sessionId": sid, "cwd": s.workspace})
	if got := currentValues(now.ConfigOptions); !mapsEqual(got, want) {
		t.Errorf("after the rejections the session's options are %v, want %v unchanged", got, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func TestSetModeAndTheModeOptionStayInStep(t *testing.T) {
	s := startCorvid(t, text("unused", 0), testkit.Options{})
	sid := s.ready(t, testkit.Minimal())

	before := len(s.Updates(sid))
	s.MustCall(s.ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	s.roundTrip(t)
	ups := s.Updates(sid)[before:]
	if got := modeUpdates(ups); !slices.Equal(got, []string{"plan"}) {
		t.Errorf("set_mode plan sent current_mode_update %v, want [plan]", got)
	}
	cfg := configUpdates(ups)
	if len(cfg) != 1 || currentValues(cfg[0])["mode"] != "plan" {
		t.Errorf("set_mode plan sent config_option_update %v, want one whose mode is plan", cfg)
	}

	before = len(s.Updates(sid))
	opts, rerr := s.setOption(t, sid, "mode", "edit")
	if rerr != nil {
		t.Fatalf("set mode=edit: %v", rerr)
	}
	if currentValues(opts)["mode"] != "edit" {
		t.Errorf("set mode=edit answered %v", currentValues(opts))
	}
	s.roundTrip(t)
	if got := modeUpdates(s.Updates(sid)[before:]); !slices.Equal(got, []string{"edit"}) {
		t.Errorf("set_config_option mode=edit sent current_mode_update %v, want [edit]", got)
	}

	_, rerr = s.Call(s.ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "reckless"})
	expectError(t, "set_mode to an unknown mode", testkit.Message{Error: rerr}, -32602)
}

func finalToolStatus(ups []testkit.Update) string {
	st := toolStatuses(ups)
	if len(st) == 0 {
		return ""
	}
	return st[len(st)-1]
}

func TestModeIsStoredWithTheSession(t *testing.T) {
	st := newSharedHome(t, text("hello", 0))
	a := st.start(t, testkit.BooleanOptions())
	sid := a.NewSession(a.ctx, st.workspace)
	a.MustCall(a.ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	if _, rerr := a.setOption(t, sid, "thought_level", "medium"); rerr != nil {
		t.Fatalf("set thought_level: %v", rerr)
	}
	a.Close()

	b := st.start(t, testkit.BooleanOptions())
	loaded := b.callSetup(t, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}})
	checkScriptOptions(t, "session/load after set_mode plan", loaded, "plan")
	if got := currentValues(loaded.ConfigOptions)["thought_level"]; got != "medium" {
		t.Errorf("the loaded session's thought_level is %q, want the stored medium", got)
	}
}

func TestModelChoiceIsStoredWithTheSession(t *testing.T) {
	api := fakeanthropic.New(t)
	home := filepath.Join(t.TempDir(), "corvid-home")
	ws := t.TempDir()
	a := startOnAPI(t, api, "claude-sonnet-4-6", ws, home)
	sid := a.NewSession(a.ctx, ws)
	if _, rerr := a.setOption(t, sid, "model", "anthropic:claude-haiku-4-5"); rerr != nil {
		t.Fatalf("set model: %v", rerr)
	}
	a.Close()

	b := startOnAPI(t, api, "claude-sonnet-4-6", ws, home)
	loaded := b.callSetup(t, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	if got := currentValues(loaded.ConfigOptions)["model"]; got != "anthropic:claude-haiku-4-5" {
		t.Errorf("the loaded session's model is %q, want the chosen anthropic:claude-haiku-4-5", got)
	}
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}})
	b.turn(t, sid, "hi", "end_turn")
	// The exact id the API gets is TestRequestsNameTheModelWithoutTheProviderPrefix's concern.
	if reqs := api.Requests(); len(reqs) != 1 || !strings.HasSuffix(reqs[0].Body.Model, "claude-haiku-4-5") {
		t.Errorf("after the load the request went to model %q, want claude-haiku-4-5", reqs[len(reqs)-1].Body.Model)
	}
}

// Regression (internal/agent, loop.go and commands.go): llm.Request.Model is "the
// provider-specific model id, without the provider prefix" (internal/llm),
// but the agent fills it with ModelInfo.ID, "anthropic:claude-sonnet-4-6",
// and the anthropic provider passes it on: every POST /v1/messages carries
// "model":"anthropic:claude-sonnet-4-6", which the real API rejects as an
// unknown model. The same after switching with set_config_option model, and
// in the compaction request.
func TestRequestsNameTheModelWithoutTheProviderPrefix(t *testing.T) {
	api := fakeanthropic.New(t)
	s := startOnAPI(t, api, "claude-sonnet-4-6", t.TempDir(), "")
	sid := s.NewSession(s.ctx, s.workspace)
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}})
	s.turn(t, sid, "hi", "end_turn")
	if _, rerr := s.setOption(t, sid, "model", "anthropic:claude-haiku-4-5"); rerr != nil {
		t.Fatalf("set model: %v", rerr)
	}
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}})
	s.turn(t, sid, "again", "end_turn")
	var got []string
	for _, r := range api.Requests() {
		got = append(got, r.Body.Model)
	}
	if !slices.Equal(got, []string{"claude-sonnet-4-6", "claude-haiku-4-5"}) {
		t.Errorf("the API was asked for models %q, want [claude-sonnet-4-6 claude-haiku-4-5]", got)
	}
}

func TestUsageUsedIsTheCurrentContextNotASum(t *testing.T) {
	s := startCorvid(t, scriptFile(t, "usage-two-turns"), testkit.Options{})
	sid := s.ready(t, testkit.Minimal())
	var used []int64
	for _, p := range []string{"first", "second"} {
		for _, u := range testkit.OfKind(s.turn(t, sid, p, "end_turn"), "usage_update") {
			var v struct {
				Used int64 `json:"used"`
				Size int64 `json:"size"`
			}
			_ = json.Unmarshal(u.Raw, &v)
			used = append(used, v.Used)
		}
	}
	if !slices.Equal(used, []int64{1050, 1260}) {
		t.Errorf("usage_update.used %v, want [1050 1260] (each response's input+output, not a running sum)", used)
	}
}

// The options do what they say: the thought level becomes the request's
// thinking budget, and the chosen context tier is the usage_update's size.
func TestThoughtLevelAndContextWindowReachTheModelAndTheUsage(t *testing.T) {
	api := fakeanthropic.New(t)
	s := startOnAPI(t, api, "claude-sonnet-4-6", t.TempDir(), "")
	sid := s.NewSession(s.ctx, s.workspace)
	answer := fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}, Usage: fakeanthropic.Usage{InputTokens: 500, OutputTokens: 5}}

	api.Enqueue(answer)
	first := s.turn(t, sid, "one", "end_turn")
	if _, rerr := s.setOption(t, sid, "thought_level", "high"); rerr != nil {
		t.Fatalf("set thought_level high: %v", rerr)
	}
	if _, rerr := s.setOption(t, sid, "context_window", "1000000"); rerr != nil {
		t.Fatalf("set context_window: %v", rerr)
	}
	api.Enqueue(answer)
	second := s.turn(t, sid, "two", "end_turn")

	reqs := api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if th := reqs[0].Body.Thinking; th != nil && th.Type == "enabled" {
		t.Errorf("thought level off, yet the request enabled thinking: %+v", th)
	}
	// Claude 4.6 takes adaptive thinking with an effort (budget_tokens is
	// deprecated there); the 1M tier needs Anthropic's long-context beta.
	if th := reqs[1].Body.Thinking; th == nil || th.Type != "adaptive" || !strings.Contains(string(reqs[1].Raw), `"output_config":{"effort":"high"}`) {
		t.Errorf("thought level high sent thinking %+v (%s), want adaptive with effort high", th, reqs[1].Raw)
	}
	if b0, b1 := reqs[0].Header.Get("Anthropic-Beta"), reqs[1].Header.Get("Anthropic-Beta"); strings.Contains(b0, "context-1m") || !strings.Contains(b1, "context-1m-2025-08-07") {
		t.Errorf("anthropic-beta %q then %q, want the 1M context beta only after choosing the 1M tier", b0, b1)
	}
	_, size1, _ := usageUsed(first)
	_, size2, _ := usageUsed(second)
	if !slices.Equal(size1, []int64{200000}) || !slices.Equal(size2, []int64{1000000}) {
		t.Errorf("usage_update.size %v then %v, want [200000] then [1000000] after choosing the 1M tier", size1, size2)
	}
}
