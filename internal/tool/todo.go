package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed todo.md
var todoDescription string

// Todo records the model's task list; the result carries the whole list as
// a plan.
type Todo struct{}

type todoInput struct {
	Todos []PlanEntry `json:"todos"`
}

func (Todo) Name() string        { return "todo" }
func (Todo) Description() string { return todoDescription }
func (Todo) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"todos":{"type":"array","description":"The complete task list","items":{"type":"object","properties":{` +
		`"content":{"type":"string","description":"The task"},` +
		`"status":{"type":"string","enum":["pending","in_progress","completed"]},` +
		`"priority":{"type":"string","enum":["high","medium","low"]}},` +
		`"required":["content","status"]}}},"required":["todos"]}`)
}

func (Todo) Describe(env *Env, raw json.RawMessage) Preview {
	return Preview{Kind: KindThink, Title: "Update the plan", Access: AccessNone}
}

func (Todo) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in todoInput
	if r := decodeInput("todo", call.Input, &in); r != nil {
		return *r, nil
	}
	plan := make([]PlanEntry, 0, len(in.Todos))
	counts := map[string]int{}
	for i, e := range in.Todos {
		e.Content = strings.TrimSpace(e.Content)
		if e.Content == "" {
			return ErrorResult(fmt.Sprintf("todo item %d has no content", i+1)), nil
		}
		switch e.Status {
		case "pending", "in_progress", "completed":
		case "":
			e.Status = "pending"
		default:
			return ErrorResult(fmt.Sprintf("todo item %d: status %q is not pending, in_progress or completed", i+1, e.Status)), nil
		}
		switch e.Priority {
		case "high", "medium", "low":
		case "":
			e.Priority = "medium"
		default:
			return ErrorResult(fmt.Sprintf("todo item %d: priority %q is not high, medium or low", i+1, e.Priority)), nil
		}
		counts[e.Status]++
		plan = append(plan, e)
	}
	out := fmt.Sprintf("Plan updated: %d pending, %d in progress, %d completed.",
		counts["pending"], counts["in_progress"], counts["completed"])
	return Result{Output: out, Plan: plan, HasPlan: true}, nil
}
