package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
)

// Reasoning state travels statelessly (store=false): the encrypted content
// of a reasoning item is yielded as an EventSignature on that item's
// thinking block, as JSON {"id", "encrypted_content"}, and sent back as a
// reasoning input item when the thinking part returns in the history.

// reasoningSig is the Signature of a thinking part made by this API.
type reasoningSig struct {
	ID               string `json:"id"`
	EncryptedContent string `json:"encrypted_content"`
}

// wantsReasoning says whether to ask for reasoning summaries and state.
func (m *model) wantsReasoning(req llm.Request) bool {
	return req.ThinkingBudget > 0 || m.cfg.Info.Reasoning
}

// responsesParams translates a request into a Responses API request body.
func (m *model) responsesParams(req llm.Request) respRequest {
	items := []any{}
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleAssistant {
			items = append(items, responsesAssistant(msg)...)
		} else {
			items = append(items, responsesUser(msg)...)
		}
	}
	p := respRequest{
		Model:        req.Model,
		Input:        items,
		Stream:       true,
		Store:        false,
		Instructions: req.System,
	}
	if req.MaxTokens > 0 {
		p.MaxOutputTokens = int64(req.MaxTokens)
	}
	if m.wantsReasoning(req) {
		p.Reasoning = &respReasoning{Summary: "auto", Effort: effort(req.ThinkingBudget)}
		p.Include = []string{"reasoning.encrypted_content"}
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema(t.InputSchema)})
	}
	return p
}

func responsesUser(msg llm.Message) []any {
	var out []any
	var content, resultImages []any
	for _, part := range msg.Parts {
		switch part.Type {
		case llm.PartToolResult:
			out = append(out, respFunctionOutput{Type: "function_call_output", CallID: part.ToolUseID, Output: toolResultText(part)})
			for _, img := range part.Images {
				resultImages = append(resultImages, inputImagePart(img))
			}
		case llm.PartText:
			content = append(content, inputText{Type: "input_text", Text: part.Text})
		case llm.PartImage:
			content = append(content, inputImagePart(part))
		}
	}
	if len(resultImages) > 0 {
		intro := inputText{Type: "input_text", Text: "Images returned by the tool calls above:"}
		out = append(out, respMessage{Role: "user", Content: append([]any{intro}, resultImages...)})
	}
	if len(content) > 0 {
		out = append(out, respMessage{Role: "user", Content: content})
	}
	return out
}

func inputImagePart(p llm.Part) inputImage {
	return inputImage{Type: "input_image", Detail: "auto", ImageURL: dataURL(p)}
}

func responsesAssistant(msg llm.Message) []any {
	var out []any
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, respMessage{Role: "assistant", Content: text.String()})
			text.Reset()
		}
	}
	for _, part := range msg.Parts {
		switch part.Type {
		case llm.PartThinking:
			var sig reasoningSig
			if part.Signature == "" || json.Unmarshal([]byte(part.Signature), &sig) != nil || sig.ID == "" || sig.EncryptedContent == "" {
				continue // not ours, or nothing the API could use without store
			}
			flush()
			// summary is required even when empty (ReasoningItem.required
			// is [id, summary, type]): a non-nil empty list sends [].
			summary := []summaryText{}
			if part.Text != "" {
				summary = append(summary, summaryText{Type: "summary_text", Text: part.Text})
			}
			out = append(out, respReasoningItem{Type: "reasoning", ID: sig.ID, Summary: summary, EncryptedContent: sig.EncryptedContent})
		case llm.PartText:
			text.WriteString(part.Text)
		case llm.PartToolUse:
			flush()
			args := string(part.Input)
			if args == "" {
				args = "{}"
			}
			out = append(out, respFunctionCall{Type: "function_call", CallID: part.ToolUseID, Name: part.ToolName, Arguments: args})
		}
	}
	flush()
	return out
}

// respState turns Responses API events into llm events. Every text part,
// reasoning summary and function call gets its own block index, in order
// of appearance.
type respState struct {
	next    int
	blocks  map[string]int
	calls   map[int64]*toolCall // by output_index
	ordered []int64
	refused bool
}

func (s *respState) block(key string) int {
	if i, ok := s.blocks[key]; ok {
		return i
	}
	s.blocks[key] = s.next
	s.next++
	return s.next - 1
}

// streamResponses runs a Responses API stream.
func (m *model) streamResponses(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		attemptCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		watch := llm.NewIdleWatch(m.idleTimeout(), cancel)
		defer watch.Stop()
		res, err := m.send(attemptCtx, "responses", m.responsesParams(req), watch)
		if err != nil {
			watch.Stop()
			yield(llm.Event{}, m.failure(ctx, watch, err))
			return
		}
		defer res.Body.Close()
		st := &respState{blocks: map[string]int{}, calls: map[int64]*toolCall{}}
		var failed error
		ended := false // the stream's end was yielded, or the consumer left
		readErr := readEvents(res.Body, func(data []byte) bool {
			if hasError(data) {
				failed = m.errorEvent(data)
				return false
			}
			var e respEvent
			if err := decodeEvent(data, &e); err != nil {
				failed = err
				return false
			}
			evs, done, err := m.respEvent(st, &e)
			if done {
				watch.Stop()
			}
			if !yieldAll(watch, yield, evs) {
				ended = true
				return false
			}
			if err != nil {
				yield(llm.Event{}, err)
				ended = true
				return false
			}
			if done {
				ended = true
				return false
			}
			return true
		})
		if ended {
			return
		}
		watch.Stop()
		if failed == nil {
			failed = readErr
		}
		if failed != nil || ctx.Err() != nil || watch.Fired() {
			yield(llm.Event{}, m.failure(ctx, watch, failed))
			return
		}
		yield(llm.Event{}, errCut(m))
	}
}

// respEvent handles one event; done is true after the terminal event.
func (m *model) respEvent(st *respState, e *respEvent) (evs []llm.Event, done bool, err error) {
	switch e.Type {
	case "response.output_text.delta", "response.refusal.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return st.delta(e), false, nil
	case "response.output_item.added":
		return st.itemAdded(e), false, nil
	case "response.function_call_arguments.delta":
		if t, ok := st.calls[int64(e.OutputIndex)]; ok && e.Delta != "" {
			t.args.WriteString(string(e.Delta))
			evs = append(evs, llm.Event{Type: llm.EventToolUseDelta, Index: t.block, Text: string(e.Delta)})
		}
	case "response.function_call_arguments.done":
		if t, ok := st.calls[int64(e.OutputIndex)]; ok && e.Arguments != "" {
			t.args.Reset()
			t.args.WriteString(string(e.Arguments))
		}
	case "response.output_item.done":
		return st.itemDone(e), false, nil
	case "response.completed", "response.incomplete":
		return st.completed(e), true, nil
	case "response.failed":
		code, msg := string(e.Response.Error.Code), string(e.Response.Error.Message)
		if msg == "" {
			msg = "the response failed"
		}
		return nil, true, m.streamError(code, msg)
	case "error":
		msg := string(e.Message)
		if msg == "" {
			msg = "the stream carried an error"
		}
		return nil, true, m.streamError(string(e.Code), msg)
	}
	return evs, false, nil
}

// delta turns a text, refusal or reasoning delta into a text or thinking
// event of its block.
func (st *respState) delta(e *respEvent) []llm.Event {
	if e.Type == "response.refusal.delta" {
		st.refused = true
	}
	if e.Delta == "" {
		return nil
	}
	typ, key := llm.EventTextDelta, fmt.Sprintf("t:%d:%d", e.OutputIndex, e.ContentIndex)
	switch e.Type {
	case "response.reasoning_summary_text.delta":
		typ, key = llm.EventThinkingDelta, fmt.Sprintf("r:%d:%d", e.OutputIndex, e.SummaryIndex)
	case "response.reasoning_text.delta": // raw reasoning (open-weight models)
		typ, key = llm.EventThinkingDelta, fmt.Sprintf("r:%d:%d", e.OutputIndex, e.ContentIndex)
	}
	return []llm.Event{{Type: typ, Index: st.block(key), Text: string(e.Delta)}}
}

// itemAdded starts a function call.
func (st *respState) itemAdded(e *respEvent) []llm.Event {
	if e.Item.Type != "function_call" {
		return nil
	}
	t := &toolCall{block: st.block(fmt.Sprintf("f:%d", e.OutputIndex)), id: string(e.Item.CallID), name: string(e.Item.Name), started: true}
	if t.id == "" {
		t.id = string(e.Item.ID)
	}
	st.calls[int64(e.OutputIndex)] = t
	st.ordered = append(st.ordered, int64(e.OutputIndex))
	return []llm.Event{{Type: llm.EventToolUseStart, Index: t.block, ToolUseID: t.id, ToolName: t.name}}
}

// itemDone ends a function call with its whole input, or carries a
// reasoning item's encrypted content as its block's signature.
func (st *respState) itemDone(e *respEvent) []llm.Event {
	switch e.Item.Type {
	case "function_call":
		t, ok := st.calls[int64(e.OutputIndex)]
		if !ok {
			return nil
		}
		args := t.args.String()
		if a := e.Item.arguments(); a != "" {
			args = a
		}
		delete(st.calls, int64(e.OutputIndex))
		return []llm.Event{{Type: llm.EventToolUseEnd, Index: t.block, ToolUseID: t.id, ToolName: t.name, Input: toolInput(args)}}
	case "reasoning":
		if e.Item.EncryptedContent != "" {
			sig, _ := json.Marshal(reasoningSig{ID: string(e.Item.ID), EncryptedContent: string(e.Item.EncryptedContent)})
			return []llm.Event{{Type: llm.EventSignature, Index: st.block(fmt.Sprintf("r:%d:0", e.OutputIndex)), Text: string(sig)}}
		}
	}
	return nil
}

// completed reports usage and the stop reason of the terminal event.
func (st *respState) completed(e *respEvent) []llm.Event {
	r := e.Response
	u := r.Usage
	cached, written := int64(u.InputTokensDetails.CachedTokens), int64(u.InputTokensDetails.CacheWriteTokens)
	usage := llm.Event{Type: llm.EventUsage, Usage: llm.Usage{
		InputTokens:      max(0, int64(u.InputTokens)-cached-written),
		OutputTokens:     int64(u.OutputTokens),
		CacheReadTokens:  cached,
		CacheWriteTokens: written,
	}}
	reason := llm.StopEndTurn
	switch {
	case e.Type == "response.incomplete" && r.IncompleteDetails.Reason == "content_filter", st.refused:
		reason = llm.StopRefusal
	case e.Type == "response.incomplete":
		reason = llm.StopMaxTokens
	case len(st.ordered) > 0:
		reason = llm.StopToolUse
	}
	return []llm.Event{usage, {Type: llm.EventStop, StopReason: reason}}
}
