package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/tool"
)

//go:embed exitplan.md
var exitPlanDescription string

// exitPlanName is the tool the model calls in plan mode to leave it.
const exitPlanName = "exit_plan"

// The answers exit_plan offers, and the mode each one switches to. Keep
// planning comes first: a client that picks the first allow_once option by
// itself (the permission fallback) must never leave plan mode.
var exitPlanChoices = []struct {
	label, description string
	mode               permission.Mode // "": stay in plan mode
}{
	{"Keep planning", "Stay in plan mode and refine the plan", ""},
	{"Approve, ask before changes", "Switch to default mode: every change asks first", permission.ModeDefault},
	{"Approve, edit files without asking", "Switch to edit mode: edits in the workspace run, shell and network ask", permission.ModeEdit},
}

// exitPlan is the exit_plan tool: it shows the plan (as a plan update and
// as the question's content), asks the user to approve it, and on approval
// switches the session's mode. It is offered only in plan mode (see
// Turn.request).
type exitPlan struct{ s *Session }

type exitPlanInput struct {
	Plan  string   `json:"plan"`
	Steps []string `json:"steps"`
}

func (exitPlan) Name() string        { return exitPlanName }
func (exitPlan) Description() string { return exitPlanDescription }
func (exitPlan) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"plan":{"type":"string","description":"The complete plan, in Markdown"},` +
		`"steps":{"type":"array","items":{"type":"string"},"description":"The plan's steps, one short imperative line each"}},"required":["plan"]}`)
}

func (exitPlan) Describe(_ *tool.Env, raw json.RawMessage) tool.Preview {
	var in exitPlanInput
	_ = json.Unmarshal(raw, &in)
	return tool.Preview{Kind: tool.KindThink, Title: "Ready to leave plan mode", Access: tool.AccessNone,
		Content: []tool.Content{{Type: tool.ContentText, Text: in.Plan}}}
}

func (t exitPlan) Run(ctx context.Context, env *tool.Env, call tool.Call) (tool.Result, error) {
	var in exitPlanInput
	if err := json.Unmarshal(call.Input, &in); err != nil || strings.TrimSpace(in.Plan) == "" {
		return tool.ErrorResult(`exit_plan needs {"plan": "..."}: the complete plan as Markdown`), nil
	}
	if !t.s.settings.view().plan {
		return tool.ErrorResult("the session is not in plan mode; carry on without exit_plan"), nil
	}
	t.s.conv.emit(Event{Kind: EventPlan, Plan: planEntries(in)})
	q := tool.Question{Header: "Plan", Question: "Approve this plan and leave plan mode?"}
	for _, c := range exitPlanChoices {
		q.Options = append(q.Options, tool.Option{Label: c.label, Description: c.description})
	}
	req := tool.AskRequest{CallID: call.ID, Title: "Approve the plan", Message: in.Plan, Questions: []tool.Question{q}}
	ans, outcome, err := tool.AskAnswers(ctx, env, req)
	if err != nil || ans == nil {
		if err == nil {
			outcome.Output += " You are still in plan mode."
		}
		return outcome, err
	}
	picked := ""
	if len(ans[0]) > 0 {
		picked = ans[0][0]
	}
	shown := in.Plan + "\n\nApprove this plan and leave plan mode? → " + orDefault(picked, "(no answer)")
	for _, c := range exitPlanChoices {
		if c.label != picked || c.mode == "" {
			continue
		}
		if err := t.s.SetMode(string(c.mode)); err != nil {
			return tool.ErrorResult(err.Error()), nil
		}
		// Not recorded: the mode is saved with the session's settings
		// and a load's response carries it.
		t.s.ShowAll(Event{Kind: EventMode, ModeID: string(c.mode)})
		msg := fmt.Sprintf("The user approved the plan; the session is now in %s mode. Carry out the plan.", c.mode)
		return tool.Result{Output: msg, Content: []tool.Content{{Type: tool.ContentText, Text: shown}}}, nil
	}
	msg := "The user wants to keep planning: you are still in plan mode. Ask what to change, or refine the plan."
	return tool.Result{Output: msg, Content: []tool.Content{{Type: tool.ContentText, Text: shown}}}, nil
}

// planEntries are the plan's steps, or its Markdown list items, as pending
// plan entries.
func planEntries(in exitPlanInput) []tool.PlanEntry {
	steps := in.Steps
	if len(steps) == 0 {
		for _, line := range strings.Split(in.Plan, "\n") {
			l := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(l, "- "), strings.HasPrefix(l, "* "):
				steps = append(steps, strings.TrimSpace(l[2:]))
			case len(l) > 2 && l[0] >= '0' && l[0] <= '9':
				if i := strings.IndexAny(l, ".)"); i > 0 && i < 4 {
					steps = append(steps, strings.TrimSpace(l[i+1:]))
				}
			}
		}
	}
	if len(steps) == 0 {
		first, _, _ := strings.Cut(strings.TrimSpace(in.Plan), "\n")
		steps = []string{first}
	}
	out := make([]tool.PlanEntry, 0, len(steps))
	for _, s := range steps {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, tool.PlanEntry{Content: s, Priority: "medium", Status: "pending"})
		}
	}
	return out
}
