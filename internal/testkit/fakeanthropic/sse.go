package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// streamer writes one scripted response as server-sent events, the way the
// Messages API does with stream:true, and fires the response's fault when
// its turn comes.
type streamer struct {
	w          http.ResponseWriter
	rc         *http.ResponseController
	fault      Fault
	stop       <-chan struct{}
	clientGone <-chan struct{}

	started bool // headers written
	events  int  // counted events written (pings excluded)
	broken  bool // a write failed, a fault ended the stream, or we must stop
}

func (st *streamer) run(resp Response, model string) {
	u := resp.Usage
	st.event("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": resp.MessageID, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": usageJSON(u, min(u.OutputTokens, 1)),
		},
	})
	st.ping()
	chunk := resp.ChunkSize
	if chunk <= 0 {
		chunk = 8
	}
	for i, b := range resp.Blocks {
		st.delay(resp)
		st.block(i, b, chunk, resp)
	}
	st.delay(resp)
	st.event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": resp.StopReason, "stop_sequence": nil},
		"usage": usageJSON(u, u.OutputTokens),
	})
	st.event("message_stop", map[string]any{"type": "message_stop"})
}

func (st *streamer) block(i int, b Block, chunk int, resp Response) {
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
	st.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})

	delta := func(d map[string]any) {
		st.delay(resp)
		st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
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
	st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

// event writes one counted event, first firing the fault if this is its
// place in the stream.
func (st *streamer) event(name string, payload any) {
	if st.broken {
		return
	}
	if st.fault.Kind != NoFault && st.events == st.fault.AfterEvents {
		st.fire()
		if st.broken {
			return
		}
	}
	st.write(name, payload)
	st.events++
}

func (st *streamer) ping() { st.write("ping", map[string]any{"type": "ping"}) }

func (st *streamer) fire() {
	f := st.fault
	st.fault = Fault{} // once
	switch f.Kind {
	case FaultStreamError:
		st.write("error", errorBody(f))
		st.broken = true
	case FaultCut:
		st.flush()
		// Abort the handler: net/http closes the connection without the
		// final chunk, so the client reads an unexpected EOF.
		panic(http.ErrAbortHandler)
	case FaultStall:
		if !wait(f.Stall, st.stop, st.clientGone) {
			st.broken = true
		}
	}
}

func (st *streamer) delay(resp Response) {
	if st.broken || resp.EventDelay <= 0 {
		return
	}
	if !wait(resp.EventDelay, st.stop, st.clientGone) {
		st.broken = true
	}
}

func (st *streamer) write(name string, payload any) {
	if st.broken {
		return
	}
	if !st.started {
		h := st.w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("Request-Id", "req_fake")
		st.w.WriteHeader(http.StatusOK)
		st.started = true
	}
	data, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("fakeanthropic: marshal %s: %v", name, err))
	}
	if _, err := fmt.Fprintf(st.w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		st.broken = true
		return
	}
	st.flush()
}

func (st *streamer) flush() {
	if st.started && st.rc.Flush() != nil {
		st.broken = true
	}
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
