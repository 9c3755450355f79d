package fakeanthropic

import (
	"time"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/testkit/fakeserver"
)

// streamMessage writes one scripted response as server-sent events, the way
// the Messages API does with stream:true. st fires the response's fault;
// the event delays are placed here, after message_start and before each
// block, delta and message_delta.
func streamMessage(st *fakeserver.Stream, resp Response, model string) {
	u := resp.Usage
	st.Event("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": resp.MessageID, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": usageJSON(u, min(u.OutputTokens, 1)),
		},
	})
	st.Write("ping", `{"type":"ping"}`) // uncounted: no fault fires before a ping
	chunk := resp.ChunkSize
	if chunk <= 0 {
		chunk = 8
	}
	for i, b := range resp.Blocks {
		st.Sleep(resp.EventDelay)
		streamBlock(st, i, b, chunk, resp.EventDelay)
	}
	st.Sleep(resp.EventDelay)
	st.Event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": resp.StopReason, "stop_sequence": nil},
		"usage": usageJSON(u, u.OutputTokens),
	})
	st.Event("message_stop", map[string]any{"type": "message_stop"})
}

func streamBlock(st *fakeserver.Stream, i int, b Block, chunk int, delay time.Duration) {
	var start map[string]any
	switch b.Kind {
	case KindThinking:
		start = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
	case KindRedactedThinking:
		start = map[string]any{"type": "redacted_thinking", "data": b.Data}
	case KindToolUse:
		start = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
	default:
		start = map[string]any{"type": "text", "text": ""}
	}
	st.Event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})

	delta := func(d map[string]any) {
		st.Sleep(delay)
		st.Event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
	}
	switch b.Kind {
	case KindThinking:
		for _, piece := range pieces(b.Text, chunk) {
			delta(map[string]any{"type": "thinking_delta", "thinking": piece})
		}
		if b.Signature != "" {
			delta(map[string]any{"type": "signature_delta", "signature": b.Signature})
		}
	case KindToolUse:
		// The API opens a tool's input with an empty piece.
		delta(map[string]any{"type": "input_json_delta", "partial_json": ""})
		for _, piece := range pieces(b.Input, chunk) {
			delta(map[string]any{"type": "input_json_delta", "partial_json": piece})
		}
	case KindText:
		for _, piece := range pieces(b.Text, chunk) {
			delta(map[string]any{"type": "text_delta", "text": piece})
		}
	}
	st.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

// pieces splits s into pieces of at most n bytes, never inside a rune.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		if end == 0 { // a rune longer than n
			_, end = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
