package fakeopenai

import (
	"fmt"

	"github.com/corvid-agent/corvid/internal/testkit/fakeserver"
)

// responses streams the response as Responses API events: response.created,
// one output item per block (reasoning summary, message text, function
// call) with its deltas, then response.completed or response.incomplete
// carrying usage.
func (st *streamer) responses() {
	respID := fmt.Sprintf("resp_fake_%d", st.n)
	base := func(status string, output []any) map[string]any {
		return map[string]any{
			"id": respID, "object": "response", "created_at": 1700000000, "status": status,
			"model": st.resp.Model, "output": output, "parallel_tool_calls": true,
			"tool_choice": "auto", "tools": []any{}, "error": nil, "incomplete_details": nil,
		}
	}
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = st.nextSeq()
		st.Event(typ, fields)
	}
	ev("response.created", map[string]any{"response": base("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": base("in_progress", []any{})})

	var output []any
	for i, b := range st.resp.Blocks {
		var item map[string]any
		switch b.Kind {
		case KindReasoning:
			id := fmt.Sprintf("rs_fake_%d_%d", st.n, i)
			ev("response.output_item.added", map[string]any{"output_index": i,
				"item": map[string]any{"id": id, "type": "reasoning", "summary": []any{}}})
			part := map[string]any{"type": "summary_text", "text": ""}
			ev("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "part": part})
			for _, p := range fakeserver.Pieces(b.Text, st.chunkSize()) {
				ev("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "delta": p})
			}
			ev("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "text": b.Text})
			done := map[string]any{"type": "summary_text", "text": b.Text}
			ev("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "part": done})
			item = map[string]any{"id": id, "type": "reasoning", "summary": []any{done}}
			if b.EncryptedContent != "" {
				item["encrypted_content"] = b.EncryptedContent
			}
		case KindText:
			id := fmt.Sprintf("msg_fake_%d_%d", st.n, i)
			ev("response.output_item.added", map[string]any{"output_index": i,
				"item": map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
			ev("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, p := range fakeserver.Pieces(b.Text, st.chunkSize()) {
				ev("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": p, "logprobs": []any{}})
			}
			ev("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": b.Text, "logprobs": []any{}})
			part := map[string]any{"type": "output_text", "text": b.Text, "annotations": []any{}}
			ev("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": part})
			item = map[string]any{"id": id, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		case KindToolCall:
			id := fmt.Sprintf("fc_fake_%d_%d", st.n, i)
			callID := st.callID(i, b)
			ev("response.output_item.added", map[string]any{"output_index": i,
				"item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": callID, "name": b.Name, "arguments": ""}})
			for _, p := range fakeserver.Pieces(b.Arguments, st.chunkSize()) {
				ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": p})
			}
			ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": b.Arguments, "name": b.Name})
			item = map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": callID, "name": b.Name, "arguments": b.Arguments}
		default:
			continue
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": item})
		output = append(output, item)
	}

	u := st.resp.Usage
	final := base("completed", output)
	final["usage"] = map[string]any{
		"input_tokens":          u.InputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CachedTokens},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
		"total_tokens":          u.InputTokens + u.OutputTokens,
	}
	switch fr := st.finishReason(); fr {
	case "length", "content_filter":
		final["status"] = "incomplete"
		reason := "max_output_tokens"
		if fr == "content_filter" {
			reason = "content_filter"
		}
		final["incomplete_details"] = map[string]any{"reason": reason}
		ev("response.incomplete", map[string]any{"response": final})
	default:
		ev("response.completed", map[string]any{"response": final})
	}
	st.Due()
}
