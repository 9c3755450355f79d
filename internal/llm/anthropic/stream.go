package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
)

// translator turns the API's stream events into llm.Events, one response
// at a time. Usage is reported once, at message_delta, with the input and
// cache counts of message_start folded in, so that nothing is yielded
// before the first content block: an attempt that fails that early can
// still be retried.
type translator struct {
	blocks   map[int64]*toolBlock // tool_use blocks by index
	usage    llm.Usage
	stop     llm.StopReason
	stopSeen bool // message_delta told us why the model stopped
	done     bool // message_stop seen: EventStop yielded, read no further
	err      error
	out      []llm.Event
}

type toolBlock struct {
	id, name string
	input    strings.Builder
}

// translate returns the events for ev (often none). The slice is reused by
// the next call. It sets t.err when the stream is unusable and t.done after
// the final event.
func (t *translator) translate(ev *streamEvent) []llm.Event {
	t.out = t.out[:0]
	idx := int(ev.Index)
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		t.usage = llm.Usage{
			InputTokens:      u.InputTokens,
			OutputTokens:     u.OutputTokens,
			CacheReadTokens:  u.CacheReadInputTokens,
			CacheWriteTokens: u.CacheCreationInputTokens,
		}

	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "text":
			t.emitText(llm.EventTextDelta, idx, cb.Text)
		case "thinking":
			t.emitText(llm.EventThinkingDelta, idx, cb.Thinking)
			t.emitText(llm.EventSignature, idx, cb.Signature)
		case "redacted_thinking":
			t.emitText(llm.EventSignature, idx, redactedPrefix+cb.Data)
		case "tool_use":
			if t.blocks == nil {
				t.blocks = map[int64]*toolBlock{}
			}
			t.blocks[ev.Index] = &toolBlock{id: cb.ID, name: cb.Name}
			t.out = append(t.out, llm.Event{Type: llm.EventToolUseStart, Index: idx, ToolUseID: cb.ID, ToolName: cb.Name})
		}
		// Server tools and their results run on Anthropic's side; corvid
		// declares none, so any other block type is ignored.

	case "content_block_delta":
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			t.emitText(llm.EventTextDelta, idx, d.Text)
		case "thinking_delta":
			t.emitText(llm.EventThinkingDelta, idx, d.Thinking)
		case "signature_delta":
			t.emitText(llm.EventSignature, idx, d.Signature)
		case "input_json_delta":
			if b := t.blocks[ev.Index]; b != nil {
				b.input.WriteString(d.PartialJSON)
				t.emitText(llm.EventToolUseDelta, idx, d.PartialJSON)
			}
		}

	case "content_block_stop":
		b := t.blocks[ev.Index]
		if b == nil {
			break
		}
		delete(t.blocks, ev.Index)
		input := strings.TrimSpace(b.input.String())
		if input == "" {
			input = "{}"
		}
		if !json.Valid([]byte(input)) {
			t.err = &llm.Error{Provider: "anthropic",
				Message: "Anthropic sent invalid JSON as the input of tool " + b.name + "; try again"}
			break
		}
		t.out = append(t.out, llm.Event{Type: llm.EventToolUseEnd, Index: idx, ToolUseID: b.id, ToolName: b.name,
			Input: json.RawMessage(input)})

	case "message_delta":
		// message_delta's usage is cumulative; fields it leaves at zero
		// keep message_start's value.
		u := ev.Usage
		t.usage.OutputTokens = u.OutputTokens
		if u.InputTokens > 0 {
			t.usage.InputTokens = u.InputTokens
		}
		if u.CacheReadInputTokens > 0 {
			t.usage.CacheReadTokens = u.CacheReadInputTokens
		}
		if u.CacheCreationInputTokens > 0 {
			t.usage.CacheWriteTokens = u.CacheCreationInputTokens
		}
		t.out = append(t.out, llm.Event{Type: llm.EventUsage, Usage: t.usage})
		if ev.Delta.StopReason != "" {
			t.stop, t.stopSeen = stopReason(ev.Delta.StopReason), true
		}

	case "message_stop":
		t.out = append(t.out, t.stopEvent())
		t.done = true
	}
	return t.out
}

// finish is called when the body ended cleanly without message_stop: the
// response is complete if message_delta gave a stop reason.
func (t *translator) finish() (llm.Event, bool) {
	if !t.stopSeen {
		return llm.Event{}, false
	}
	return t.stopEvent(), true
}

func (t *translator) stopEvent() llm.Event {
	stop := t.stop
	if stop == "" {
		stop = llm.StopEndTurn
	}
	return llm.Event{Type: llm.EventStop, StopReason: stop}
}

func (t *translator) emitText(typ llm.EventType, idx int, text string) {
	if text != "" {
		t.out = append(t.out, llm.Event{Type: typ, Index: idx, Text: text})
	}
}

// stopReason maps the API's stop reasons onto corvid's closed set.
func stopReason(r string) llm.StopReason {
	switch r {
	case "tool_use":
		return llm.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopMaxTokens
	case "refusal":
		return llm.StopRefusal
	default: // end_turn, stop_sequence, pause_turn (the turn can go on), unknown
		return llm.StopEndTurn
	}
}
