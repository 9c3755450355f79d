package fakeopenai

import (
	"fmt"

	"github.com/corvid-agent/corvid/internal/testkit/fakeserver"
)

// chat streams the response as Chat Completions chunks: role, then each
// block's deltas, a chunk carrying finish_reason, the usage chunk (when
// asked for), and `data: [DONE]`.
func (st *streamer) chat(includeUsage bool) {
	id := fmt.Sprintf("chatcmpl-fake-%d", st.n)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": st.resp.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	st.Event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	tool := 0
	for _, b := range st.resp.Blocks {
		switch b.Kind {
		case KindText:
			for _, p := range fakeserver.Pieces(b.Text, st.chunkSize()) {
				st.Event("", chunk(map[string]any{"content": p}, nil))
			}
		case KindReasoning:
			field := b.Field
			if field == "" {
				field = "reasoning_content"
			}
			for _, p := range fakeserver.Pieces(b.Text, st.chunkSize()) {
				st.Event("", chunk(map[string]any{"content": nil, field: p}, nil))
			}
		case KindToolCall:
			st.Event("", chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": tool, "id": st.callID(tool, b), "type": "function",
				"function": map[string]any{"name": b.Name, "arguments": ""},
			}}}, nil))
			for _, p := range fakeserver.Pieces(b.Arguments, st.chunkSize()) {
				st.Event("", chunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": tool, "function": map[string]any{"arguments": p},
				}}}, nil))
			}
			tool++
		}
	}
	st.Event("", chunk(map[string]any{}, st.finishReason()))
	if includeUsage {
		u := st.resp.Usage
		st.Event("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": st.resp.Model,
			"choices": []any{},
			"usage": map[string]any{
				"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens,
				"total_tokens":              u.InputTokens + u.OutputTokens,
				"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedTokens},
				"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
			},
		})
	}
	st.doneMarker()
}
