package agent

import (
	"encoding/json"
	"fmt"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/tool"
)

// closeDanglingToolUses answers tool uses that will not run, so the history
// stays valid for the next model call.
func (t *Turn) closeDanglingToolUses(calls []llm.Part, why string) {
	if len(calls) == 0 {
		return
	}
	var results []llm.Part
	for _, c := range calls {
		results = append(results, llm.Part{Type: llm.PartToolResult, ToolUseID: c.ToolUseID, Text: why, IsError: true})
	}
	t.s.conv.appendHistory(llm.Message{Role: llm.RoleUser, Parts: results})
}

// runTools runs the calls in order and returns their results for the model.
// After a cancel, the remaining calls are answered without running. Several
// sub-agents asked for at once run in parallel (subagent.go).
func (t *Turn) runTools(calls []llm.Part) []llm.Part {
	if allTasks(calls) {
		return t.runTasks(calls)
	}
	results := make([]llm.Part, 0, len(calls))
	for _, c := range calls {
		if t.ctx.Err() != nil {
			results = append(results, llm.Part{Type: llm.PartToolResult, ToolUseID: c.ToolUseID, Text: "cancelled by the user before it ran", IsError: true})
			continue
		}
		results = append(results, t.runCall(c))
	}
	return results
}

// runCall runs one call of the model: in codeMode "all" only the script
// tool is offered, and the script's calls run under it.
func (t *Turn) runCall(c llm.Part) llm.Part {
	if t.s.CodeMode() != CodeModeAll {
		return t.runTool(c)
	}
	if c.ToolName == scriptToolName {
		return t.runScript(c)
	}
	return t.refuseDirectCall(c)
}

func (t *Turn) runTool(c llm.Part) llm.Part { return t.runToolIn(c, "") }

// runToolIn runs one tool call; parent is the script call it belongs to
// ("" for a call of the model).
func (t *Turn) runToolIn(c llm.Part, parent string) llm.Part {
	s := t.s
	id := s.conv.toolCallID(c.ToolUseID)
	result := func(text string, isErr bool, images []llm.Part) llm.Part {
		return llm.Part{Type: llm.PartToolResult, ToolUseID: c.ToolUseID, Text: text, IsError: isErr, Images: images}
	}
	tl, ok := s.toolbox.view().tools.Get(c.ToolName)
	if !ok {
		msg := fmt.Sprintf("unknown tool %q", c.ToolName)
		s.conv.emit(Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: id, Name: c.ToolName, Title: c.ToolName, Kind: tool.KindOther, Status: ToolFailed, RawInput: c.Input,
			Content: []tool.Content{{Type: tool.ContentText, Text: msg}}, ParentID: parent}})
		return result(msg, true, nil)
	}
	pv := tl.Describe(&s.env, c.Input)
	pv.Content = s.agent.redact.content(pv.Content)
	call := ToolCall{ID: id, Name: c.ToolName, Title: pv.Title, Kind: pv.Kind, Status: ToolPending, Content: pv.Content, Locations: pv.Locations, RawInput: c.Input, ParentID: parent}
	if call.Kind == "" {
		call.Kind = tool.KindOther
	}
	if call.Title == "" {
		call.Title = c.ToolName
	}
	s.conv.emit(Event{Kind: EventToolCall, ToolCall: &call})

	fail := func(msg string) llm.Part {
		s.conv.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: id, Status: ToolFailed, Content: []tool.Content{{Type: tool.ContentText, Text: msg}}}})
		return result(msg, true, nil)
	}
	if ok, why := t.permit(tl, pv, call); !ok {
		if t.ctx.Err() != nil {
			return fail(stoppedWhy(t.ctx))
		}
		return fail(why)
	}
	s.conv.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: id, Status: ToolInProgress}})
	res, err := tl.Run(t.ctx, &s.env, tool.Call{ID: id, Input: c.Input, Preview: &pv, Progress: func(content []tool.Content) {
		s.conv.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: id, Content: s.agent.redact.content(content)}})
	}, Live: func(content []tool.Content) {
		s.conv.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: id, Content: s.agent.redact.content(content)}, Transient: true})
	}})
	if err != nil {
		if t.ctx.Err() != nil {
			return fail(stoppedWhy(t.ctx))
		}
		s.agent.cfg.Logger.Error("tool failed", "tool", c.ToolName, "err", err)
		return fail(fmt.Sprintf("%s failed: %v", c.ToolName, err))
	}
	res.Output, res.Content = s.agent.redact.text(res.Output), s.agent.redact.content(res.Content)
	status := ToolCompleted
	if res.IsError {
		status = ToolFailed
	}
	if res.HasPlan {
		s.conv.emit(Event{Kind: EventPlan, Plan: res.Plan})
	}
	upd := &ToolCall{ID: id, Status: status, Content: res.Content, Locations: res.Locations}
	if raw, err := json.Marshal(map[string]any{"output": res.Output, "isError": res.IsError}); err == nil && len(res.Output) <= 64<<10 {
		upd.RawOutput = raw
	}
	s.conv.emit(Event{Kind: EventToolCallState, ToolCall: upd})
	var images []llm.Part
	if s.env.Images {
		images = res.Images
	}
	return result(res.Output, res.IsError, images)
}
