package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

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

// responsesParams translates a request into Responses API parameters.
func (m *model) responsesParams(req llm.Request) responses.ResponseNewParams {
	var items responses.ResponseInputParam
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleAssistant {
			items = append(items, responsesAssistant(msg)...)
		} else {
			items = append(items, responsesUser(msg)...)
		}
	}
	p := responses.ResponseNewParams{
		Model: req.Model,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items},
		Store: param.NewOpt(false),
	}
	if req.System != "" {
		p.Instructions = param.NewOpt(req.System)
	}
	if req.MaxTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(int64(req.MaxTokens))
	}
	if m.wantsReasoning(req) {
		p.Reasoning = shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto}
		if e := effort(req.ThinkingBudget); e != "" {
			p.Reasoning.Effort = shared.ReasoningEffort(e)
		}
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	for _, t := range req.Tools {
		tool := responses.ToolParamOfFunction(t.Name, schema(t.InputSchema), false)
		if t.Description != "" {
			tool.OfFunction.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, tool)
	}
	return p
}

func responsesUser(msg llm.Message) []responses.ResponseInputItemUnionParam {
	var out []responses.ResponseInputItemUnionParam
	var content, resultImages responses.ResponseInputMessageContentListParam
	for _, part := range msg.Parts {
		switch part.Type {
		case llm.PartToolResult:
			out = append(out, responses.ResponseInputItemParamOfFunctionCallOutput(toolResultText(part)))
			out[len(out)-1].OfFunctionCallOutput.CallID = param.NewOpt(part.ToolUseID)
			for _, img := range part.Images {
				resultImages = append(resultImages, inputImage(img))
			}
		case llm.PartText:
			content = append(content, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: part.Text}})
		case llm.PartImage:
			content = append(content, inputImage(part))
		}
	}
	if len(resultImages) > 0 {
		intro := responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: "Images returned by the tool calls above:"}}
		out = append(out, responses.ResponseInputItemParamOfMessage(append(responses.ResponseInputMessageContentListParam{intro}, resultImages...), responses.EasyInputMessageRoleUser))
	}
	if len(content) > 0 {
		out = append(out, responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser))
	}
	return out
}

func inputImage(p llm.Part) responses.ResponseInputContentUnionParam {
	img := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
	img.OfInputImage.ImageURL = param.NewOpt(dataURL(p))
	return img
}

func responsesAssistant(msg llm.Message) []responses.ResponseInputItemUnionParam {
	var out []responses.ResponseInputItemUnionParam
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, responses.ResponseInputItemParamOfMessage(text.String(), responses.EasyInputMessageRoleAssistant))
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
			summary := []responses.ResponseReasoningItemSummaryParam{}
			if part.Text != "" {
				summary = append(summary, responses.ResponseReasoningItemSummaryParam{Text: part.Text})
			}
			item := responses.ResponseInputItemParamOfReasoning(sig.ID, summary)
			item.OfReasoning.EncryptedContent = param.NewOpt(sig.EncryptedContent)
			out = append(out, item)
		case llm.PartText:
			text.WriteString(part.Text)
		case llm.PartToolUse:
			flush()
			args := string(part.Input)
			if args == "" {
				args = "{}"
			}
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(args, part.ToolUseID, part.ToolName))
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
	calls   map[int64]*chatTool // by output_index
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
		var fail httpFailure
		attemptCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		watch := llm.NewIdleWatch(m.idleTimeout(), cancel)
		defer watch.Stop()
		stream := m.resp.NewStreaming(attemptCtx, m.responsesParams(req), fail.capture(), idleOption(watch))
		defer stream.Close()
		st := &respState{blocks: map[string]int{}, calls: map[int64]*chatTool{}}
		for stream.Next() {
			evs, done, err := m.respEvent(st, stream.Current())
			if done {
				watch.Stop()
			}
			if !yieldAll(watch, yield, evs) {
				return
			}
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			if done {
				return
			}
		}
		watch.Stop()
		switch err := stream.Err(); {
		case ctx.Err() != nil:
			yield(llm.Event{}, ctx.Err())
		case watch.Fired():
			yield(llm.Event{}, m.errStalled())
		case err != nil:
			yield(llm.Event{}, m.wrap(ctx, err, &fail))
		default:
			yield(llm.Event{}, errCut(m))
		}
	}
}

// respEvent handles one event; done is true after the terminal event.
func (m *model) respEvent(st *respState, e responses.ResponseStreamEventUnion) (evs []llm.Event, done bool, err error) {
	switch e.Type {
	case "response.output_text.delta":
		if e.Delta != "" {
			evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: st.block(fmt.Sprintf("t:%d:%d", e.OutputIndex, e.ContentIndex)), Text: e.Delta})
		}
	case "response.refusal.delta":
		st.refused = true
		if e.Delta != "" {
			evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: st.block(fmt.Sprintf("t:%d:%d", e.OutputIndex, e.ContentIndex)), Text: e.Delta})
		}
	case "response.reasoning_summary_text.delta":
		if e.Delta != "" {
			evs = append(evs, llm.Event{Type: llm.EventThinkingDelta, Index: st.block(fmt.Sprintf("r:%d:%d", e.OutputIndex, e.SummaryIndex)), Text: e.Delta})
		}
	case "response.reasoning_text.delta": // raw reasoning (open-weight models)
		if e.Delta != "" {
			evs = append(evs, llm.Event{Type: llm.EventThinkingDelta, Index: st.block(fmt.Sprintf("r:%d:%d", e.OutputIndex, e.ContentIndex)), Text: e.Delta})
		}
	case "response.output_item.added":
		if e.Item.Type == "function_call" {
			t := &chatTool{block: st.block(fmt.Sprintf("f:%d", e.OutputIndex)), id: e.Item.CallID, name: e.Item.Name, started: true}
			if t.id == "" {
				t.id = e.Item.ID
			}
			st.calls[e.OutputIndex] = t
			st.ordered = append(st.ordered, e.OutputIndex)
			evs = append(evs, llm.Event{Type: llm.EventToolUseStart, Index: t.block, ToolUseID: t.id, ToolName: t.name})
		}
	case "response.function_call_arguments.delta":
		if t, ok := st.calls[e.OutputIndex]; ok && e.Delta != "" {
			t.args.WriteString(e.Delta)
			evs = append(evs, llm.Event{Type: llm.EventToolUseDelta, Index: t.block, Text: e.Delta})
		}
	case "response.function_call_arguments.done":
		if t, ok := st.calls[e.OutputIndex]; ok && e.Arguments != "" {
			t.args.Reset()
			t.args.WriteString(e.Arguments)
		}
	case "response.output_item.done":
		switch e.Item.Type {
		case "function_call":
			t, ok := st.calls[e.OutputIndex]
			if !ok {
				break
			}
			args := t.args.String()
			if a := e.Item.Arguments.OfString; a != "" {
				args = a
			}
			evs = append(evs, llm.Event{Type: llm.EventToolUseEnd, Index: t.block, ToolUseID: t.id, ToolName: t.name, Input: toolInput(args)})
			delete(st.calls, e.OutputIndex)
		case "reasoning":
			if e.Item.EncryptedContent != "" {
				sig, _ := json.Marshal(reasoningSig{ID: e.Item.ID, EncryptedContent: e.Item.EncryptedContent})
				evs = append(evs, llm.Event{Type: llm.EventSignature, Index: st.block(fmt.Sprintf("r:%d:0", e.OutputIndex)), Text: string(sig)})
			}
		}
	case "response.completed", "response.incomplete":
		r := e.Response
		u := r.Usage
		cached, written := u.InputTokensDetails.CachedTokens, u.InputTokensDetails.CacheWriteTokens
		evs = append(evs, llm.Event{Type: llm.EventUsage, Usage: llm.Usage{
			InputTokens:      max(0, u.InputTokens-cached-written),
			OutputTokens:     u.OutputTokens,
			CacheReadTokens:  cached,
			CacheWriteTokens: written,
		}})
		reason := llm.StopEndTurn
		switch {
		case e.Type == "response.incomplete" && r.IncompleteDetails.Reason == "content_filter", st.refused:
			reason = llm.StopRefusal
		case e.Type == "response.incomplete":
			reason = llm.StopMaxTokens
		case len(st.ordered) > 0:
			reason = llm.StopToolUse
		}
		return append(evs, llm.Event{Type: llm.EventStop, StopReason: reason}), true, nil
	case "response.failed":
		code, msg := string(e.Response.Error.Code), e.Response.Error.Message
		if msg == "" {
			msg = "the response failed"
		}
		return nil, true, m.streamError(code, msg)
	case "error":
		msg := e.Message
		if msg == "" {
			msg = "the stream carried an error"
		}
		return nil, true, m.streamError(e.Code, msg)
	}
	return evs, false, nil
}
