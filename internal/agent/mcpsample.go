package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/mcp"
	"github.com/corvid-agent/corvid/internal/tool"
)

// defaultSampleTokens is the limit of a sampling request that names none
// (the spec makes maxTokens required; some servers send 0).
const defaultSampleTokens = 1024

// mcpSample answers an MCP server's sampling/createMessage: the user is
// shown the server, the prompt and the token limit and asked; if they
// allow it, the session's model answers and its usage is counted in the
// session's cost. The request shows as a tool call of its own.
func (s *Session) mcpSample(ctx context.Context, req mcp.SampleRequest) (mcp.SampleResult, error) {
	rs := s.settings.view()
	model, window := rs.model, rs.window
	info := model.Info()

	limit := int(req.MaxTokens)
	if limit <= 0 {
		limit = defaultSampleTokens
	}
	if max := info.MaxOutput; max > 0 && limit > max {
		limit = max
	}
	var shown strings.Builder
	fmt.Fprintf(&shown, "MCP server %q asks corvid's model (%s) for up to %d tokens.\n", req.Server, modelName(info), limit)
	if req.System != "" {
		fmt.Fprintf(&shown, "\nSystem prompt:\n%s\n", req.System)
	}
	var msgs []llm.Message
	for _, m := range req.Messages {
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		msgs = append(msgs, llm.Message{Role: role, Parts: []llm.Part{llm.Text(m.Text)}})
		fmt.Fprintf(&shown, "\n%s:\n%s\n", m.Role, m.Text)
	}
	raw, _ := json.Marshal(map[string]any{"server": req.Server, "maxTokens": limit, "systemPrompt": req.System, "messages": req.Messages})
	call := ToolCall{ID: NewID("sampling"), Name: "mcp_sampling", Title: fmt.Sprintf("%s asks the model (up to %d tokens)", req.Server, limit),
		Kind: tool.KindThink, Status: ToolPending, RawInput: raw,
		Content: []tool.Content{{Type: tool.ContentText, Text: strings.TrimSpace(shown.String())}}}
	s.conv.emit(Event{Kind: EventToolCall, ToolCall: &call})
	fail := func(why string) {
		s.conv.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: call.ID, Status: ToolFailed,
			Content: []tool.Content{{Type: tool.ContentText, Text: why}}}})
	}
	ans, err := s.front.RequestPermission(ctx, call)
	if err != nil || !ans.Allowed() {
		fail("declined: the model was not asked")
		return mcp.SampleResult{}, mcp.ErrSampleDeclined
	}
	s.conv.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: call.ID, Status: ToolInProgress}})

	var text strings.Builder
	var usage llm.Usage
	gotUsage := false
	stop := ""
	var streamErr error
	for ev, err := range model.Stream(ctx, llm.Request{Model: modelName(info), System: req.System, Messages: msgs, MaxTokens: limit}) {
		if err != nil {
			streamErr = err
			break
		}
		switch ev.Type {
		case llm.EventTextDelta:
			text.WriteString(ev.Text)
		case llm.EventUsage:
			usage, gotUsage = ev.Usage, true
		case llm.EventStop:
			stop = string(ev.StopReason)
		}
	}
	if gotUsage {
		if usd, ok := costOf(info, usage); ok {
			total, used := s.conv.addCost(usd), s.conv.used()
			s.conv.emit(Event{Kind: EventUsage, Usage: &Usage{Used: used, Size: window, CostUSD: &total}})
		}
	}
	if streamErr != nil {
		fail("the model failed: " + streamErr.Error())
		return mcp.SampleResult{}, fmt.Errorf("the model failed: %v", streamErr)
	}
	s.conv.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: call.ID, Status: ToolCompleted,
		Content: []tool.Content{{Type: tool.ContentText, Text: text.String()}}}})
	return mcp.SampleResult{Text: text.String(), Model: info.ID, StopReason: sampleStop(stop)}, nil
}

// sampleStop maps corvid's stop reasons to MCP's.
func sampleStop(s string) string {
	switch s {
	case "max_tokens":
		return "maxTokens"
	case "", "end_turn", "tool_use":
		return "endTurn"
	}
	return s
}
