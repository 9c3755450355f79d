package agent

import (
	"encoding/json"
	"fmt"
	"slices"
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
		tier := s.windowTier
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
			ContextWindow:  tier,
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
		blk       block
		msgID     = NewID("msg")
		thoughtID = NewID("thought")
		usage     llm.Usage
		gotUsage  bool
		// Where the signature of a block that is already closed goes: the
		// part made of the block, by the stream's index, and the
		// signatures of tool calls not yet ended.
		partAt  = map[int]int{}
		toolSig = map[int]string{}
		inTool  = map[int]bool{}
	)
	flush := func() {
		if p, ok := blk.part(); ok {
			for _, i := range blk.indexes {
				partAt[i] = len(resp.parts)
			}
			resp.parts = append(resp.parts, p)
		}
		blk = block{}
	}
	// open makes the current block one of kind at index, closing the
	// current one unless it continues: same kind and index, or (thinking
	// only) an unsigned reasoning text continued under a new index.
	open := func(kind llm.PartType, idx int) {
		switch {
		case blk.kind == "" && blk.has(idx):
			blk.kind = kind // a signature came first; its content follows
			return
		case blk.kind == kind && blk.has(idx):
			return
		case blk.kind == kind && kind == llm.PartThinking && blk.signature == "":
			blk.indexes = append(blk.indexes, idx)
			return
		}
		flush()
		blk = block{kind: kind, indexes: []int{idx}}
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
			open(llm.PartText, ev.Index)
			blk.text.WriteString(ev.Text)
			if ev.Text != "" {
				s.emit(Event{Kind: EventMessageChunk, MessageID: msgID, Content: &Block{Type: BlockText, Text: ev.Text}})
			}
		case llm.EventThinkingDelta:
			open(llm.PartThinking, ev.Index)
			blk.text.WriteString(ev.Text)
			if ev.Text != "" {
				s.emit(Event{Kind: EventThoughtChunk, MessageID: thoughtID, Content: &Block{Type: BlockText, Text: ev.Text}})
			}
		case llm.EventSignature:
			// A signature belongs to the block, tool call or part of its
			// index; one that comes alone is a block of its own (e.g. a
			// redacted thinking block).
			switch i, done := partAt[ev.Index]; {
			case blk.has(ev.Index):
				blk.signature += ev.Text
			case inTool[ev.Index]:
				toolSig[ev.Index] += ev.Text
			case done:
				resp.parts[i].Signature += ev.Text
			default:
				// A new block: its kind is that of the content that
				// follows under this index, else thinking.
				flush()
				blk = block{indexes: []int{ev.Index}, signature: ev.Text}
			}
		case llm.EventToolUseStart:
			flush()
			inTool[ev.Index] = true
		case llm.EventToolUseEnd:
			flush()
			input := ev.Input
			if len(input) == 0 || !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			p := llm.Part{Type: llm.PartToolUse, ToolUseID: ev.ToolUseID, ToolName: ev.ToolName, Input: input, Signature: toolSig[ev.Index]}
			delete(inTool, ev.Index)
			delete(toolSig, ev.Index)
			partAt[ev.Index] = len(resp.parts)
			resp.parts = append(resp.parts, p)
			resp.calls = append(resp.calls, p)
		case llm.EventUsage:
			usage, gotUsage = ev.Usage, true
		case llm.EventStop:
			resp.stop = ev.StopReason
		}
	}
	flush()
	if gotUsage {
		// used is what the context holds now (this response's input plus
		// its output), not a running sum; cost is the session's total.
		used := usage.InputTokens + usage.CacheReadTokens + usage.CacheWriteTokens + usage.OutputTokens
		tokens := usage
		u := &Usage{Used: used, Size: window, Tokens: &tokens}
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

// block is the text or thinking block a stream is filling: its kind, the
// stream indexes it came under, its text and its signature.
type block struct {
	kind      llm.PartType // "" until known (or when there is no block)
	indexes   []int
	text      strings.Builder
	signature string
}

func (b *block) has(idx int) bool {
	return slices.Contains(b.indexes, idx)
}

// part is the block as a message part; an empty text without a signature
// is none, and a signature with no content is a thinking part (e.g. a
// redacted thinking block).
func (b *block) part() (llm.Part, bool) {
	if b.text.Len() == 0 && b.signature == "" {
		return llm.Part{}, false
	}
	kind := b.kind
	if kind == "" {
		kind = llm.PartThinking
	}
	return llm.Part{Type: kind, Text: b.text.String(), Signature: b.signature}, true
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
