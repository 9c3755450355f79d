package anthropic

// The request building and stream translation corvid used while it ran on
// the official SDK, kept in tests as the oracle that the plain-HTTP
// provider is checked against (oracle_request_test.go,
// oracle_stream_test.go).

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/corvid-agent/corvid/internal/llm"
)

// sdkParams is the request as corvid built it on the SDK's parameter types
// (the code it used before it spoke HTTP itself), kept as the oracle.
func sdkParams(m *model, req llm.Request) (anthropic.MessageNewParams, error) {
	modelID := req.Model
	if modelID == "" {
		modelID = m.cfg.Model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.info.MaxOutput
	}
	p := anthropic.MessageNewParams{Model: modelID}
	switch {
	case req.ThinkingBudget > 0 && adaptive(modelID):
		// Claude 4.6 and later: the model decides how much to think, at
		// an effort; budget_tokens is deprecated there (removed from 4.7).
		p.Thinking = anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{}}
		p.OutputConfig = anthropic.OutputConfigParam{Effort: anthropic.OutputConfigEffort(effort(modelID, req.ThinkingBudget))}
	case req.ThinkingBudget > 0:
		budget := max(req.ThinkingBudget, minThinkingBudget)
		if maxTokens <= budget {
			maxTokens = budget + answerReserve
		}
		p.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(budget))
	}
	p.MaxTokens = int64(maxTokens)
	// Prompt caching: breakpoints after the system prompt, after the
	// tools and at the end of the conversation (3 of the 4 allowed), so
	// each turn reads the prefix the previous one wrote.
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		tool, err := sdkToolParam(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tool)
	}
	if n := len(p.Tools); n > 0 && p.Tools[n-1].OfTool != nil {
		p.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	for _, msg := range req.Messages {
		blocks := sdkContentBlocks(msg.Parts)
		if len(blocks) == 0 {
			continue // the API rejects a message without content
		}
		switch msg.Role {
		case llm.RoleAssistant:
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		case llm.RoleUser:
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		default:
			return p, fmt.Errorf("anthropic: message role %q is neither user nor assistant", msg.Role)
		}
	}
	if n := len(p.Messages); n > 0 {
		switch last := p.Messages[n-1]; {
		case last.OfUser != nil:
			sdkMarkCache(last.OfUser.Content)
		case last.OfAssistant != nil:
			sdkMarkCache(last.OfAssistant.Content)
		}
	}
	return p, nil
}

// sdkMarkCache puts a cache breakpoint on the last block of blocks that can
// carry one (thinking blocks cannot).
func sdkMarkCache(blocks []anthropic.ContentBlockParamUnion) {
	cc := anthropic.NewCacheControlEphemeralParam()
	for i := len(blocks) - 1; i >= 0; i-- {
		b := &blocks[i]
		switch {
		case b.OfText != nil:
			b.OfText.CacheControl = cc
		case b.OfToolResult != nil:
			b.OfToolResult.CacheControl = cc
		case b.OfToolUse != nil:
			b.OfToolUse.CacheControl = cc
		case b.OfImage != nil:
			b.OfImage.CacheControl = cc
		default:
			continue
		}
		return
	}
}

// sdkToolParam describes t to the API. The input schema is sent exactly as
// given (it must be a JSON object schema).
func sdkToolParam(t llm.ToolSpec) (anthropic.ToolUnionParam, error) {
	tool := anthropic.ToolParam{Name: t.Name}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`) // the API requires one
	}
	if !json.Valid(schema) {
		return anthropic.ToolUnionParam{}, fmt.Errorf("anthropic: tool %s: input schema is not valid JSON", t.Name)
	}
	tool.InputSchema = param.Override[anthropic.ToolInputSchemaParam](schema)
	return anthropic.ToolUnionParam{OfTool: &tool}, nil
}

// sdkContentBlocks converts parts, leaving out those the API would refuse: an
// empty text, and a thinking part without signature (one that was cut off
// mid-stream or came from another provider), which cannot be verified.
func sdkContentBlocks(parts []llm.Part) []anthropic.ContentBlockParamUnion {
	var blocks []anthropic.ContentBlockParamUnion
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(p.Text))
			}
		case llm.PartThinking:
			switch {
			case p.Text == "" && strings.HasPrefix(p.Signature, redactedPrefix):
				blocks = append(blocks, anthropic.NewRedactedThinkingBlock(strings.TrimPrefix(p.Signature, redactedPrefix)))
			case p.Signature != "":
				blocks = append(blocks, anthropic.NewThinkingBlock(p.Signature, p.Text))
			}
		case llm.PartImage:
			blocks = append(blocks, sdkImageBlock(p))
		case llm.PartToolUse:
			blocks = append(blocks, anthropic.NewToolUseBlock(p.ToolUseID, toolInput(p.Input), p.ToolName))
		case llm.PartToolResult:
			blocks = append(blocks, sdkToolResultBlock(p))
		}
	}
	return blocks
}

func sdkImageBlock(p llm.Part) anthropic.ContentBlockParamUnion {
	return anthropic.NewImageBlockBase64(p.MimeType, base64.StdEncoding.EncodeToString(p.Data))
}

func sdkToolResultBlock(p llm.Part) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: p.ToolUseID}
	if p.IsError {
		r.IsError = anthropic.Bool(true)
	}
	if p.Text != "" {
		r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{
			OfText: &anthropic.TextBlockParam{Text: p.Text},
		})
	}
	for _, img := range p.Images {
		r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{
			OfImage: sdkImageBlock(img).OfImage,
		})
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
}

// sdkTranslator is the translation corvid ran on the SDK's stream events
// before it read the stream itself, kept as the oracle: it turns them into llm.Events, one response
// at a time. Usage is reported once, at message_delta, with the input and
// cache counts of message_start folded in, so that nothing is yielded
// before the first content block: an attempt that fails that early can
// still be retried.
type sdkTranslator struct {
	blocks   map[int64]*sdkToolBlock // tool_use blocks by index
	usage    llm.Usage
	stop     llm.StopReason
	stopSeen bool // message_delta told us why the model stopped
	done     bool // message_stop seen: EventStop yielded, read no further
	err      error
	out      []llm.Event
}

type sdkToolBlock struct {
	id, name string
	input    strings.Builder
}

// translate returns the events for ev (often none). The slice is reused by
// the next call. It sets t.err when the stream is unusable and t.done after
// the final event.
func (t *sdkTranslator) translate(ev anthropic.MessageStreamEventUnion) []llm.Event {
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
				t.blocks = map[int64]*sdkToolBlock{}
			}
			t.blocks[ev.Index] = &sdkToolBlock{id: cb.ID, name: cb.Name}
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
			t.stop, t.stopSeen = stopReason(string(ev.Delta.StopReason)), true
		}

	case "message_stop":
		t.out = append(t.out, t.stopEvent())
		t.done = true
	}
	return t.out
}

// finish is called when the body ended cleanly without message_stop: the
// response is complete if message_delta gave a stop reason.
func (t *sdkTranslator) finish() (llm.Event, bool) {
	if !t.stopSeen {
		return llm.Event{}, false
	}
	return t.stopEvent(), true
}

func (t *sdkTranslator) stopEvent() llm.Event {
	stop := t.stop
	if stop == "" {
		stop = llm.StopEndTurn
	}
	return llm.Event{Type: llm.EventStop, StopReason: stop}
}

func (t *sdkTranslator) emitText(typ llm.EventType, idx int, text string) {
	if text != "" {
		t.out = append(t.out, llm.Event{Type: typ, Index: idx, Text: text})
	}
}
