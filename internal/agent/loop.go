package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/tool"
)

// loop runs model → tools → model until a stop reason.
func (t *Turn) loop() (StopReason, error) {
	s := t.s
	cfg := &s.agent.cfg
	for req := 0; ; req++ {
		if req >= cfg.MaxTurnRequests {
			return StopMaxTurnRequests, nil
		}
		if err := t.storeFault(); err != nil {
			return "", err
		}
		if s.needsCompaction() {
			if err := t.compact("", false); err != nil {
				if t.ctx.Err() != nil {
					return StopCancelled, nil
				}
				cfg.Logger.Warn("automatic compaction failed", "session", s.ID, "err", err)
			}
		}
		s.mu.Lock()
		msgs := append([]llm.Message(nil), s.history...)
		model := s.model
		window := s.window()
		plan := s.modeOrDefault() == permission.ModePlan
		s.mu.Unlock()
		info := model.Info()
		system := s.systemPrompt()
		if ins := s.mcpInstructions(); ins != "" {
			system += "\n\n" + ins
		}
		if plan {
			system += planModeNote
		}
		r := llm.Request{
			Model:          modelName(info),
			System:         system,
			Messages:       msgs,
			Tools:          s.registry().Specs(),
			MaxTokens:      cfg.MaxTokens,
			ThinkingBudget: s.thinkingBudget(),
		}
		resp, err := t.stream(model, r, info, window)
		// Keep whatever was streamed, even on failure or cancel.
		if len(resp.parts) > 0 {
			s.appendHistory(llm.Message{Role: llm.RoleAssistant, Parts: resp.parts})
		}
		if err != nil {
			if t.ctx.Err() != nil {
				t.closeDanglingToolUses(resp.calls, "cancelled by the user before it ran")
				return StopCancelled, nil
			}
			t.closeDanglingToolUses(resp.calls, "not run: the model response failed")
			return "", err
		}
		if len(resp.calls) == 0 {
			switch resp.stop {
			case llm.StopMaxTokens:
				return StopMaxTokens, nil
			case llm.StopRefusal:
				return StopRefusal, nil
			}
			return StopEndTurn, nil
		}
		results := t.runTools(resp.calls)
		s.appendHistory(llm.Message{Role: llm.RoleUser, Parts: results})
		if t.ctx.Err() != nil {
			return StopCancelled, nil
		}
	}
}

type response struct {
	parts []llm.Part
	calls []llm.Part // the tool_use parts
	stop  llm.StopReason
}

// stream runs one model call, emitting chunks as they arrive.
func (t *Turn) stream(model llm.Model, r llm.Request, info llm.ModelInfo, window int64) (response, error) {
	s := t.s
	var (
		resp      response
		text      strings.Builder
		thinking  strings.Builder
		signature string
		msgID     = NewID("msg")
		thoughtID = NewID("thought")
		usage     llm.Usage
		gotUsage  bool
	)
	flushText := func() {
		if thinking.Len() > 0 || signature != "" {
			resp.parts = append(resp.parts, llm.Part{Type: llm.PartThinking, Text: thinking.String(), Signature: signature})
			thinking.Reset()
			signature = ""
		}
		if text.Len() > 0 {
			resp.parts = append(resp.parts, llm.Text(text.String()))
			text.Reset()
		}
	}
	var streamErr error
	for ev, err := range model.Stream(t.ctx, r) {
		if err != nil {
			streamErr = err
			break
		}
		if t.ctx.Err() != nil {
			streamErr = t.ctx.Err()
			break
		}
		if err := t.storeFault(); err != nil {
			streamErr = err
			break
		}
		switch ev.Type {
		case llm.EventTextDelta:
			if thinking.Len() > 0 || signature != "" {
				flushText()
			}
			text.WriteString(ev.Text)
			s.emit(Event{Kind: EventMessageChunk, MessageID: msgID, Content: &Block{Type: BlockText, Text: ev.Text}})
		case llm.EventThinkingDelta:
			if text.Len() > 0 {
				flushText()
			}
			thinking.WriteString(ev.Text)
			s.emit(Event{Kind: EventThoughtChunk, MessageID: thoughtID, Content: &Block{Type: BlockText, Text: ev.Text}})
		case llm.EventSignature:
			signature += ev.Text
		case llm.EventToolUseEnd:
			flushText()
			input := ev.Input
			if len(input) == 0 || !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			p := llm.Part{Type: llm.PartToolUse, ToolUseID: ev.ToolUseID, ToolName: ev.ToolName, Input: input}
			resp.parts = append(resp.parts, p)
			resp.calls = append(resp.calls, p)
		case llm.EventUsage:
			usage, gotUsage = ev.Usage, true
		case llm.EventStop:
			resp.stop = ev.StopReason
		}
	}
	flushText()
	if gotUsage {
		// used is what the context holds now (this response's input plus
		// its output), not a running sum; cost is the session's total.
		used := usage.InputTokens + usage.CacheReadTokens + usage.CacheWriteTokens + usage.OutputTokens
		u := &Usage{Used: used, Size: window}
		s.mu.Lock()
		s.lastUsed = used
		s.mu.Unlock()
		if usd, ok := costOf(info, usage); ok {
			s.mu.Lock()
			s.cost += usd
			total := s.cost
			s.mu.Unlock()
			u.CostUSD = &total
		}
		s.emit(Event{Kind: EventUsage, Usage: u})
	}
	if streamErr != nil {
		return resp, streamErr
	}
	return resp, nil
}

const planModeNote = "\n\nYou are in plan mode: the session is read-only. Investigate with read and search tools and answer with a plan; do not try to write files or run commands (such calls are refused)."

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
	t.s.appendHistory(llm.Message{Role: llm.RoleUser, Parts: results})
}

// runTools runs the calls in order and returns their results for the model.
// After a cancel, the remaining calls are answered without running.
func (t *Turn) runTools(calls []llm.Part) []llm.Part {
	results := make([]llm.Part, 0, len(calls))
	for _, c := range calls {
		if t.ctx.Err() != nil {
			results = append(results, llm.Part{Type: llm.PartToolResult, ToolUseID: c.ToolUseID, Text: "cancelled by the user before it ran", IsError: true})
			continue
		}
		results = append(results, t.runTool(c))
	}
	return results
}

func (t *Turn) runTool(c llm.Part) llm.Part {
	s := t.s
	id := s.toolCallID(c.ToolUseID)
	result := func(text string, isErr bool, images []llm.Part) llm.Part {
		return llm.Part{Type: llm.PartToolResult, ToolUseID: c.ToolUseID, Text: text, IsError: isErr, Images: images}
	}
	tl, ok := s.registry().Get(c.ToolName)
	if !ok {
		msg := fmt.Sprintf("unknown tool %q", c.ToolName)
		s.emit(Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: id, Name: c.ToolName, Title: c.ToolName, Kind: tool.KindOther, Status: ToolFailed, RawInput: c.Input,
			Content: []tool.Content{{Type: tool.ContentText, Text: msg}}}})
		return result(msg, true, nil)
	}
	pv := tl.Describe(&s.env, c.Input)
	pv.Content = s.agent.redact.content(pv.Content)
	call := ToolCall{ID: id, Name: c.ToolName, Title: pv.Title, Kind: pv.Kind, Status: ToolPending, Content: pv.Content, Locations: pv.Locations, RawInput: c.Input}
	if call.Kind == "" {
		call.Kind = tool.KindOther
	}
	if call.Title == "" {
		call.Title = c.ToolName
	}
	s.emit(Event{Kind: EventToolCall, ToolCall: &call})

	fail := func(msg string) llm.Part {
		s.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: id, Status: ToolFailed, Content: []tool.Content{{Type: tool.ContentText, Text: msg}}}})
		return result(msg, true, nil)
	}
	if ok, why := t.permit(tl, pv, call); !ok {
		if t.ctx.Err() != nil {
			return fail("cancelled by the user")
		}
		return fail(why)
	}
	s.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: id, Status: ToolInProgress}})
	res, err := tl.Run(t.ctx, &s.env, tool.Call{ID: id, Input: c.Input, Preview: &pv, Progress: func(content []tool.Content) {
		s.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: id, Content: s.agent.redact.content(content)}})
	}})
	if err != nil {
		if t.ctx.Err() != nil {
			return fail("cancelled by the user")
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
		s.emit(Event{Kind: EventPlan, Plan: res.Plan})
	}
	upd := &ToolCall{ID: id, Status: status, Content: res.Content, Locations: res.Locations}
	if raw, err := json.Marshal(map[string]any{"output": res.Output, "isError": res.IsError}); err == nil && len(res.Output) <= 64<<10 {
		upd.RawOutput = raw
	}
	s.emit(Event{Kind: EventToolCallState, ToolCall: upd})
	var images []llm.Part
	if s.env.Images {
		images = res.Images
	}
	return result(res.Output, res.IsError, images)
}

// permit runs the permission gate: rules, mode, remembered answers and
// operator flags decide, or the user is asked.
func (t *Turn) permit(tl tool.Tool, pv tool.Preview, call ToolCall) (bool, string) {
	s := t.s
	perms := &s.perms
	s.mu.Lock()
	mode := s.mode
	s.mu.Unlock()
	d := permission.Decide(permission.Input{Tool: tool.PermissionName(tl), Preview: pv, Roots: s.env.Roots, Mode: mode,
		Rules: perms.Rules, Memory: s.memory, Yolo: perms.Yolo, Allow: perms.Allow})
	switch d.Action {
	case permission.Allow:
		return true, ""
	case permission.Deny:
		why := d.Reason
		if why == "" {
			why = "denied by configuration"
		}
		return false, "permission denied: " + why
	}
	call.AlwaysLabel = permission.AlwaysLabel(tool.PermissionName(tl), pv)
	ans, err := s.front.RequestPermission(t.ctx, call)
	if r, ok := err.(*Refusal); ok {
		return false, "permission refused: " + r.Reason
	}
	if err != nil {
		return false, "permission request failed: the user could not be asked"
	}
	switch ans {
	case AllowAlways:
		s.memory.Remember(tool.PermissionName(tl), pv, permission.Allow)
	case RejectAlways:
		s.memory.Remember(tool.PermissionName(tl), pv, permission.Deny)
	}
	if !ans.Allowed() {
		return false, "the user rejected this tool call"
	}
	return true, ""
}

// toolCallID returns a session-unique id for a model tool-use id.
func (s *Session) toolCallID(modelID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := modelID
	if id == "" {
		id = NewID("call")
	}
	for n := 2; s.toolIDs[id]; n++ {
		id = fmt.Sprintf("%s-%d", modelID, n)
	}
	s.toolIDs[id] = true
	return id
}
