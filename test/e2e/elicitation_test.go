package e2e

// The ask_user tool and ACP elicitation (docs/elicitation.md), through the
// built binary; the fake editor validates every frame, elicitation/create
// included, against the ACP v1 schema and fails the test if corvid elicits in
// a mode the host did not advertise.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// formHost advertises form elicitation (and nothing else).
func formHost() testkit.Host {
	h := testkit.Minimal()
	h.Name = "form"
	h.Params["clientCapabilities"] = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	return h
}

var dbQuestion = map[string]any{"header": "Database", "question": "Which database should the service use?",
	"options": []any{
		map[string]any{"label": "Postgres", "description": "Relational, already in production"},
		map[string]any{"label": "SQLite", "description": "One file, no server"},
	}}

var askTwo = map[string]any{"questions": []any{
	dbQuestion,
	map[string]any{"header": "Targets", "question": "Which platforms?", "multiSelect": true,
		"options": []any{map[string]any{"label": "linux"}, map[string]any{"label": "macos"}, map[string]any{"label": "windows"}}},
	map[string]any{"header": "Name", "question": "What is the service called?"},
}}

// toolResult is the last state of the session's only tool call: its id,
// status, the text of its content and what the model read (rawOutput.output).
type toolResult struct {
	ID, Status, Shown, Model string
}

func lastTool(t *testing.T, ups []testkit.Update) toolResult {
	t.Helper()
	var r toolResult
	for _, u := range ups {
		if u.SessionUpdate != "tool_call" && u.SessionUpdate != "tool_call_update" {
			continue
		}
		r.ID = u.ToolCallID
		if u.Status != "" {
			r.Status = u.Status
		}
		for _, c := range u.ToolContent {
			if c.Type == "content" {
				r.Shown = c.Content.Text
			}
		}
		if len(u.RawOutput) > 0 {
			var o struct{ Output string }
			_ = json.Unmarshal(u.RawOutput, &o)
			r.Model = o.Output
		}
	}
	return r
}

func TestAskUserAcceptedFormBecomesTheToolResult(t *testing.T) {
	s := startCorvid(t, toolScript("ask_user", askTwo), testkit.Options{Elicitation: testkit.AcceptElicitation(map[string]any{
		"q1": "SQLite", "q2": []string{"linux", "macos"}, "q3": "ledger"})})
	sid := s.ready(t, formHost())
	if stop, rerr := s.Prompt(s.ctx, sid, "plan the service"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	els := s.Elicitations()
	if len(els) != 1 {
		t.Fatalf("%d elicitations, want 1", len(els))
	}
	el := els[0]
	res := lastTool(t, s.Updates(sid))
	if el.SessionID != sid || el.Mode != "form" || el.ToolCallID == "" || el.ToolCallID != res.ID {
		t.Errorf("elicitation scope: session %q mode %q toolCallId %q (tool call %q)", el.SessionID, el.Mode, el.ToolCallID, res.ID)
	}
	var schema struct {
		Type       string
		Required   []string
		Properties map[string]struct {
			Type, Title, Description string
			OneOf                    []struct{ Const, Title, Description string }
			Items                    struct {
				AnyOf []struct{ Const, Title string }
			}
		}
	}
	if err := json.Unmarshal(el.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	q1, q2, q3 := schema.Properties["q1"], schema.Properties["q2"], schema.Properties["q3"]
	if schema.Type != "object" || len(schema.Required) != 3 ||
		q1.Type != "string" || q1.Title != "Database" || len(q1.OneOf) != 2 || q1.OneOf[1].Const != "SQLite" || q1.OneOf[1].Description != "One file, no server" ||
		q2.Type != "array" || len(q2.Items.AnyOf) != 3 || q3.Type != "string" || len(q3.OneOf) != 0 {
		t.Errorf("requestedSchema %s", el.Schema)
	}
	if res.Status != "completed" {
		t.Errorf("tool status %q, want completed", res.Status)
	}
	for _, want := range []string{"Which database should the service use? → SQLite", "Which platforms? → linux, macos", "What is the service called? → ledger"} {
		if !strings.Contains(res.Model, want) {
			t.Errorf("the model read %q, want it to contain %q", res.Model, want)
		}
	}
	if !strings.Contains(res.Shown, "Which database") || !strings.Contains(res.Shown, "Database → SQLite") {
		t.Errorf("the tool call shows %q, want the question and its answer", res.Shown)
	}
}

func TestAskUserDeclinedOrDismissedTellsTheModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    testkit.ElicitationHandler
		want string
	}{
		{"decline", testkit.DeclineElicitation(), "declined"},
		{"cancel", testkit.CancelElicitation(), "dismissed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startCorvid(t, toolScript("ask_user", map[string]any{"questions": []any{dbQuestion}}), testkit.Options{Elicitation: tc.h})
			sid := s.ready(t, formHost())
			if stop, rerr := s.Prompt(s.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			res := lastTool(t, s.Updates(sid))
			if res.Status != "completed" || !strings.Contains(res.Model, tc.want) {
				t.Errorf("tool %+v, want completed and the model told %q", res, tc.want)
			}
		})
	}
}

// A session/cancel while the question is open withdraws it with
// $/cancel_request naming the elicitation's request id, fails the tool call
// and ends the prompt as cancelled.
func TestCancelWhileAQuestionIsOpenWithdrawsIt(t *testing.T) {
	s := startCorvid(t, toolScript("ask_user", map[string]any{"questions": []any{dbQuestion}}), testkit.Options{Elicitation: testkit.HoldElicitation()})
	sid := s.ready(t, formHost())
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "go"))
	if _, err := s.WaitElicitation(s.ctx); err != nil {
		t.Fatal(err)
	}
	s.Cancel(sid)
	res, rerr := p.Wait(s.ctx)
	if rerr != nil || !strings.Contains(string(res), `"cancelled"`) {
		t.Fatalf("prompt: %s %v, want stopReason cancelled", res, rerr)
	}
	var reqID json.RawMessage
	for _, m := range s.Requests() {
		if m.Method == "elicitation/create" {
			reqID = m.ID
		}
	}
	withdrawn := false
	for _, m := range s.Notifications() {
		var p struct{ RequestID json.RawMessage }
		if m.Method == "$/cancel_request" && json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(reqID) {
			withdrawn = true
		}
	}
	if !withdrawn {
		t.Errorf("no $/cancel_request for elicitation request %s", reqID)
	}
	if st := lastTool(t, s.Updates(sid)).Status; st != "failed" {
		t.Errorf("tool status %q, want failed", st)
	}
	s.stillUsable(t)
}

// A client without form elicitation gets one single-choice question as a
// permission request whose options are the choices.
func TestAskUserFallsBackToAPermissionChoice(t *testing.T) {
	s := startCorvid(t, toolScript("ask_user", map[string]any{"questions": []any{dbQuestion}}), testkit.Options{Permission: testkit.PickOption("choice_2")})
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	perms := s.Permissions()
	if len(perms) != 1 {
		t.Fatalf("%d permission requests, want 1", len(perms))
	}
	var names []string
	for _, o := range perms[0].Request.Options {
		names = append(names, o.Name+"/"+o.Kind)
	}
	if got := strings.Join(names, ","); got != "Postgres/allow_once,SQLite/allow_once,Don't answer/reject_once" {
		t.Errorf("options %s", got)
	}
	if res := lastTool(t, s.Updates(sid)); res.Status != "completed" || !strings.Contains(res.Model, "→ SQLite") {
		t.Errorf("tool %+v, want the model told SQLite", res)
	}
	if n := len(s.Elicitations()); n != 0 {
		t.Errorf("%d elicitations to a client that did not advertise them", n)
	}
}

// Questions no permission prompt can carry, on a client without forms: the
// model is told, and nothing is sent.
func TestAskUserTellsTheModelWhenTheClientCannotAnswer(t *testing.T) {
	s := startCorvid(t, toolScript("ask_user", askTwo), testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	res := lastTool(t, s.Updates(sid))
	if res.Status != "failed" || !strings.Contains(res.Model, "cannot show a form") {
		t.Errorf("tool %+v, want failed with why", res)
	}
	if len(s.Permissions())+len(s.Elicitations()) != 0 {
		t.Error("a question was sent")
	}
}

// A question nobody answers is withdrawn after interaction_timeout.
func TestUnansweredQuestionIsWithdrawnAfterTheInteractionTimeout(t *testing.T) {
	home := filepath.Join(t.TempDir(), "corvid-home")
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte("interaction_timeout = \"300ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startCorvid(t, toolScript("ask_user", map[string]any{"questions": []any{dbQuestion}}),
		testkit.Options{Elicitation: testkit.HoldElicitation(), Env: []string{"CORVID_HOME=" + home}})
	sid := s.ready(t, formHost())
	if stop, rerr := s.Prompt(s.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if els, err := s.ElicitationsAnswered(s.ctx); err != nil || len(els) != 1 || !els[0].Withdrawn {
		t.Errorf("elicitations %+v (%v), want one withdrawn", els, err)
	}
	if res := lastTool(t, s.Updates(sid)); res.Status != "failed" || !strings.Contains(res.Model, "did not answer in time") {
		t.Errorf("tool %+v", res)
	}
}

// The question and its answer are the tool call's content, so a second
// process replays them on session/load.
func TestQuestionAndAnswerAreReplayedOnLoad(t *testing.T) {
	st := newSharedHome(t, toolScript("ask_user", map[string]any{"questions": []any{dbQuestion}}))
	bin := testkit.BuildCorvid(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	a := &session{Editor: testkit.Start(t, bin, testkit.Options{Args: []string{"acp", "-m", "script:" + st.script}, Dir: st.workspace,
		Env: []string{"CORVID_HOME=" + st.home}, Elicitation: testkit.AcceptElicitation(map[string]any{"q1": "Postgres"})}), ctx: ctx, workspace: st.workspace}
	sid := a.ready(t, formHost())
	live := lastTool(t, a.turn(t, sid, "go", "end_turn"))
	a.Close()

	b := st.start(t, formHost())
	replayed := lastTool(t, b.load(t, sid))
	if replayed.Status != "completed" || !strings.Contains(replayed.Shown, "Which database should the service use?") || !strings.Contains(replayed.Shown, "Database → Postgres") {
		t.Errorf("replayed tool call %+v, want the question and the answer", replayed)
	}
	if replayed.Shown != live.Shown {
		t.Errorf("replay shows %q, live showed %q", replayed.Shown, live.Shown)
	}
}

// exitPlanScript calls exit_plan, then tries a write, then ends the turn.
func exitPlanScript() map[string]any {
	return map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": "exit_plan", "input": map[string]any{
			"plan": "# Plan\n\n1. Write notes.txt\n2. Check it"}}}},
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": "write", "input": map[string]any{"path": "notes.txt", "content": "x"}}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "finished"}}},
	}}
}

// In plan mode, exit_plan shows the plan as a plan update and as the
// question's content; approving switches the mode (current_mode_update and
// config_option_update) and the rest of the turn runs in it; keeping on
// planning leaves the session read-only.
func TestExitPlanSwitchesModeOnApproval(t *testing.T) {
	for _, tc := range []struct {
		answer, mode string
		written      bool
	}{
		{"Approve, edit files without asking", "edit", true},
		{"Keep planning", "", false},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			s := startCorvid(t, exitPlanScript(), testkit.Options{Elicitation: testkit.AcceptElicitation(map[string]any{"q1": tc.answer}),
				Permission: testkit.RejectOnce()})
			sid := s.ready(t, formHost())
			s.MustCall(s.ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
			before := len(s.Updates(sid))
			if stop, rerr := s.Prompt(s.ctx, sid, "plan it"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			els := s.Elicitations()
			if len(els) != 1 || !strings.Contains(els[0].Message, "1. Write notes.txt") {
				t.Fatalf("elicitations %+v, want one whose message is the plan", els)
			}
			var plan, modes []string
			configMode := ""
			for _, u := range s.Updates(sid)[before:] {
				switch u.SessionUpdate {
				case "plan":
					plan = append(plan, string(u.Raw))
				case "current_mode_update":
					var f struct{ CurrentModeID string }
					_ = json.Unmarshal(u.Raw, &f)
					modes = append(modes, f.CurrentModeID)
				case "config_option_update":
					var f struct {
						ConfigOptions []struct{ ID, CurrentValue string }
					}
					_ = json.Unmarshal(u.Raw, &f)
					for _, o := range f.ConfigOptions {
						if o.ID == "mode" {
							configMode = o.CurrentValue
						}
					}
				}
			}
			if len(plan) != 1 || !strings.Contains(plan[0], `"content":"Write notes.txt"`) || !strings.Contains(plan[0], `"content":"Check it"`) {
				t.Errorf("plan updates %v", plan)
			}
			if tc.mode != "" && (len(modes) != 1 || modes[0] != tc.mode || configMode != tc.mode) {
				t.Errorf("mode updates %v, config mode %q; want %s", modes, configMode, tc.mode)
			}
			if tc.mode == "" && len(modes)+len(configMode) != 0 {
				t.Errorf("mode changed to %v %q while planning goes on", modes, configMode)
			}
			_, err := os.Stat(filepath.Join(s.workspace, "notes.txt"))
			if written := err == nil; written != tc.written {
				t.Errorf("written = %v, want %v", written, tc.written)
			}
			if n := len(s.Permissions()); n != 0 {
				t.Errorf("%d permission requests", n)
			}
		})
	}
}

// Without form elicitation the approval is a permission request whose
// options are the answers.
func TestExitPlanAsksThroughPermissionOptionsWithoutForms(t *testing.T) {
	s := startCorvid(t, exitPlanScript(), testkit.Options{Permission: testkit.PickOption("choice_2")})
	sid := s.ready(t, testkit.Zed())
	s.MustCall(s.ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	before := len(s.Updates(sid))
	if stop, rerr := s.Prompt(s.ctx, sid, "plan it"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	perms := s.Permissions()
	if len(perms) == 0 || len(perms[0].Request.Options) != 4 || perms[0].Request.Options[1].Name != "Approve, ask before changes" {
		t.Fatalf("permission requests %+v", perms)
	}
	if !strings.Contains(string(perms[0].Request.ToolCall), "1. Write notes.txt") {
		t.Errorf("the question does not show the plan: %s", perms[0].Request.ToolCall)
	}
	var modes []string
	for _, u := range s.Updates(sid)[before:] {
		if u.SessionUpdate == "current_mode_update" {
			modes = append(modes, string(u.Raw))
		}
	}
	if len(modes) != 1 || !strings.Contains(modes[0], `"default"`) {
		t.Errorf("mode updates %v, want default", modes)
	}
}

// A host that cannot answer requests (old Gas City) gets a single-choice
// question out of band: written into the conversation with numbered
// choices, answered with `corvid respond ID N`.
func TestOldGasCityAnswersAChoiceWithRespond(t *testing.T) {
	s := startCorvid(t, toolScript("ask_user", map[string]any{"questions": []any{dbQuestion}}), testkit.Options{NeverAnswer: true})
	if _, rerr := s.Initialize(s.ctx, testkit.OldGasCity()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := s.NewSession(s.ctx, s.workspace)
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "ask"))
	u, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		return u.SessionUpdate == "agent_message_chunk" && strings.Contains(u.Content.Text, "corvid respond ")
	})
	if err != nil {
		t.Fatalf("no out-of-band question: %v", err)
	}
	m := regexp.MustCompile(`corvid respond (q\w+) NUMBER`).FindStringSubmatch(u.Content.Text)
	if m == nil || !strings.Contains(u.Content.Text, "1 Postgres, 2 SQLite, 3 Don't answer") {
		t.Fatalf("question %q", u.Content.Text)
	}
	cmd := exec.Command(testkit.BuildCorvid(t), "respond", m[1], "2")
	cmd.Env = s.Env()
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "SQLite") {
		t.Fatalf("corvid respond: %v\n%s", err, out)
	}
	if res, rerr := p.Wait(s.ctx); rerr != nil || !strings.Contains(string(res), "end_turn") {
		t.Fatalf("prompt: %s %v", res, rerr)
	}
	if res := lastTool(t, s.Updates(sid)); res.Status != "completed" || !strings.Contains(res.Model, "→ SQLite") {
		t.Errorf("tool %+v", res)
	}
	if reqs := s.Requests(); len(reqs) != 0 {
		t.Errorf("%d requests (%s…) sent to a host that cannot answer", len(reqs), reqs[0].Method)
	}
}

// A client that approves every permission request by itself (picking the
// first allow_once option) does not take the session out of plan mode.
func TestAutoApprovingClientStaysInPlanMode(t *testing.T) {
	s := startCorvid(t, exitPlanScript(), testkit.Options{Permission: testkit.AllowOnce()})
	sid := s.ready(t, testkit.Zed())
	s.MustCall(s.ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	if stop, rerr := s.Prompt(s.ctx, sid, "plan it"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if _, err := os.Stat(filepath.Join(s.workspace, "notes.txt")); err == nil {
		t.Error("the write ran: the session left plan mode")
	}
	for _, u := range s.Updates(sid) {
		if u.SessionUpdate == "current_mode_update" && !strings.Contains(string(u.Raw), `"plan"`) {
			t.Errorf("mode changed: %s", u.Raw)
		}
	}
}
