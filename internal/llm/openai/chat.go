package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"iter"
	"sort"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
)

// chatParams translates a request into a Chat Completions request body.
//
// Tool results, which corvid keeps in user messages, become role "tool"
// messages right after the assistant message that called them, as the API
// requires; their images follow in a user message (tool messages carry text
// only). Thinking parts are not sent back, except as reasoning_content on
// the assistant messages that the provider's documented rule names
// (echoReasoning), and as the reasoning_details they came with for the
// providers that want those back (echoDetails); other servers reject or
// ignore the fields.
func (m *model) chatParams(req llm.Request) chatRequest {
	var msgs []chatMessage
	if req.System != "" {
		role := "system"
		if m.official {
			role = "developer"
		}
		msgs = append(msgs, chatMessage{Role: role, Content: req.System})
	}
	rule, at, one := echoReasoning[m.p.Name], places(req.Messages), m.oneChannel(req.Model)
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleAssistant:
			if a, ok := chatAssistant(msg, rule.echoes(msg, at[i], one), echoDetails[m.p.Name]); ok {
				msgs = append(msgs, a)
			}
		default:
			msgs = append(msgs, chatUser(msg)...)
		}
	}
	p := chatRequest{
		Model:         req.Model,
		Messages:      msgs,
		Stream:        true,
		StreamOptions: chatStreamOptions{IncludeUsage: true},
	}
	if req.MaxTokens > 0 {
		if m.official {
			p.MaxCompletionTokens = int64(req.MaxTokens)
		} else {
			p.MaxTokens = int64(req.MaxTokens)
		}
	}
	m.chatThinking(&p, req)
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, chatTool{Type: "function", Function: chatFuncDecl{Name: t.Name, Description: t.Description, Parameters: schema(t.InputSchema)}})
	}
	return p
}

func chatAssistant(msg llm.Message, withReasoning, withDetails bool) (chatMessage, bool) {
	var text, reasoning strings.Builder
	a := chatMessage{Role: "assistant"}
	for _, part := range msg.Parts {
		switch part.Type {
		case llm.PartThinking:
			reasoning.WriteString(part.Text)
			var sig detailsSig
			if withDetails && strings.HasPrefix(part.Signature, `{"reasoning_details"`) && json.Unmarshal([]byte(part.Signature), &sig) == nil {
				a.ReasoningDetails = append(a.ReasoningDetails, sig.ReasoningDetails...)
			}
		case llm.PartText:
			text.WriteString(part.Text)
		case llm.PartToolUse:
			args := string(part.Input)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, chatToolCall{ID: part.ToolUseID, Type: "function", Function: chatFunction{Name: part.ToolName, Arguments: args}})
		}
	}
	if text.Len() == 0 && len(a.ToolCalls) == 0 {
		return chatMessage{}, false
	}
	if text.Len() > 0 {
		a.Content = text.String()
	}
	if withReasoning && reasoning.Len() > 0 {
		a.ReasoningContent = reasoning.String()
	}
	return a, true
}

func chatUser(msg llm.Message) []chatMessage {
	var out []chatMessage
	var parts, resultImages []any
	for _, part := range msg.Parts {
		switch part.Type {
		case llm.PartToolResult:
			out = append(out, chatMessage{Role: "tool", Content: toolResultText(part), ToolCallID: part.ToolUseID})
			for _, img := range part.Images {
				resultImages = append(resultImages, imagePart(img))
			}
		case llm.PartText:
			parts = append(parts, chatText{Type: "text", Text: part.Text})
		case llm.PartImage:
			parts = append(parts, imagePart(part))
		}
	}
	if len(resultImages) > 0 {
		out = append(out, chatMessage{Role: "user", Content: append([]any{
			chatText{Type: "text", Text: "Images returned by the tool calls above:"}}, resultImages...)})
	}
	if len(parts) == 1 {
		if only, ok := parts[0].(chatText); ok {
			return append(out, chatMessage{Role: "user", Content: only.Text})
		}
	}
	if len(parts) > 0 {
		out = append(out, chatMessage{Role: "user", Content: parts})
	}
	return out
}

func imagePart(p llm.Part) chatImage {
	return chatImage{Type: "image_url", ImageURL: imageURL{URL: dataURL(p)}}
}

func dataURL(p llm.Part) string {
	mt := p.MimeType
	if mt == "" {
		mt = "image/png"
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}

// toolCall is a tool call being assembled from deltas.
type toolCall struct {
	block   int // our event index
	id      string
	name    string
	args    strings.Builder
	started bool
}

// chatState turns chunks into llm events. Blocks get indexes in the order
// they open; a thinking or text block ends when another kind of delta
// arrives, so alternating reasoning and text make separate blocks.
type chatState struct {
	next    int
	cur     string // "text", "thinking" or ""
	curIdx  int
	tools   map[int64]*toolCall
	order   []int64
	finish  string
	usage   llm.Usage
	hasUsed bool
	details []map[string]any // OpenRouter's reasoning_details, joined (addDetails)
}

func (s *chatState) block(kind string) int {
	if s.cur != kind {
		s.cur, s.curIdx = kind, s.next
		s.next++
	}
	return s.curIdx
}

// streamChat runs a Chat Completions stream.
func (m *model) streamChat(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		attemptCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		watch := llm.NewIdleWatch(m.idleTimeout(), cancel)
		defer watch.Stop()
		res, err := m.send(attemptCtx, "chat/completions", m.chatParams(req), watch)
		if err != nil {
			watch.Stop()
			yield(llm.Event{}, m.failure(ctx, watch, err))
			return
		}
		defer res.Body.Close()
		okBody := okErrorBody(res)
		st := &chatState{tools: map[int64]*toolCall{}}
		var failed error
		stopped := false
		readErr := readEvents(res.Body, func(data []byte) bool {
			if hasError(data) {
				failed = m.errorEvent(data)
				return false
			}
			var chunk chatChunk
			if err := decodeEvent(data, &chunk); err != nil {
				failed = err
				return false
			}
			if u, ok := chunk.usage(); ok && (u.PromptTokens > 0 || u.CompletionTokens > 0) {
				// llm.Usage counts input without the cached part (as Anthropic
				// does), so that pricing each kind once adds up.
				cached, written := int64(u.PromptTokensDetails.CachedTokens), int64(u.PromptTokensDetails.CacheWriteTokens)
				st.usage = llm.Usage{
					InputTokens:      max(0, int64(u.PromptTokens)-cached-written),
					OutputTokens:     outputTokens(u),
					CacheReadTokens:  cached,
					CacheWriteTokens: written,
				}
				st.hasUsed = true
			}
			var evs []llm.Event
			for _, ch := range chunk.Choices {
				if ch.Index != 0 {
					continue
				}
				evs = append(evs, st.delta(ch.Delta)...)
				if ch.FinishReason != "" {
					st.finish = string(ch.FinishReason)
				}
			}
			if !yieldAll(watch, yield, evs) {
				stopped = true
				return false
			}
			return true
		})
		if stopped {
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
		if st.finish == "" {
			yield(llm.Event{}, m.cutError(okBody))
			return
		}
		for _, ev := range st.end() {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// usage is the chunk's usage when it has one (an object, not null).
func (c *chatChunk) usage() (chatUsage, bool) {
	var u chatUsage
	raw := bytes.TrimSpace(c.Usage)
	if len(raw) == 0 || raw[0] != '{' {
		return u, false
	}
	_ = json.Unmarshal(raw, &u)
	return u, true
}

// outputTokens is what the response generated. OpenAI counts reasoning
// tokens inside completion_tokens; xAI leaves them out (completion 1,
// reasoning 290, total 303 for 12 prompt tokens) but bills them as output.
// They are added when total_tokens shows they were left out.
func outputTokens(u chatUsage) int64 {
	out, r := int64(u.CompletionTokens), int64(u.CompletionTokensDetails.ReasoningTokens)
	if r > 0 && int64(u.TotalTokens) >= int64(u.PromptTokens)+out+r {
		out += r
	}
	return out
}

// reasoningDelta reads the non-standard reasoning fields servers add to a
// delta: reasoning_content (DeepSeek, vLLM, llama.cpp, LM Studio) and
// reasoning (OpenRouter, Ollama, Groq). Only a non-empty JSON string
// counts.
func reasoningDelta(d chatDelta) string {
	for _, raw := range []json.RawMessage{d.ReasoningContent, d.Reasoning} {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// contentPart is one element of a delta.content list, as Mistral's
// reasoning models (magistral) stream it: {"type":"text","text":…} or
// {"type":"thinking","thinking":[{"type":"text","text":…}]}.
type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Thinking []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"thinking"`
}

// contentParts reads a delta.content that is a list of typed parts; ok is
// false when it is not a list (the usual string).
func contentParts(d chatDelta) (parts []contentPart, ok bool) {
	raw := bytes.TrimSpace(d.Content)
	if !bytes.HasPrefix(raw, []byte("[")) {
		return nil, false
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil, false
	}
	return parts, true
}

// contentText is a delta.content that is not a list of parts: a string as
// itself, null as "", anything else as its JSON text.
func contentText(d chatDelta) string {
	var s str
	_ = s.UnmarshalJSON(d.Content)
	return string(s)
}

// addDetails keeps the entries of a delta's reasoning_details (OpenRouter)
// as they are, except that a reasoning.text or reasoning.summary entry
// continuing the last one (same type and index) is joined to it, as
// OpenRouter's own clients accumulate them. An entry that is not a JSON
// object is dropped.
func (s *chatState) addDetails(d chatDelta) {
	for _, raw := range d.ReasoningDetails {
		var e map[string]any
		if json.Unmarshal(raw, &e) != nil || e == nil {
			continue
		}
		if n := len(s.details); n > 0 {
			last := s.details[n-1]
			if last["type"] == e["type"] && last["index"] == e["index"] && (e["type"] == "reasoning.text" || e["type"] == "reasoning.summary") {
				for _, k := range []string{"text", "summary", "signature"} {
					if v, ok := e[k].(string); ok {
						prev, _ := last[k].(string)
						last[k] = prev + v
					}
				}
				for k, v := range e {
					if _, ok := last[k]; !ok {
						last[k] = v
					}
				}
				continue
			}
		}
		s.details = append(s.details, e)
	}
}

func (s *chatState) delta(d chatDelta) []llm.Event {
	var evs []llm.Event
	s.addDetails(d)
	if r := reasoningDelta(d); r != "" {
		evs = append(evs, llm.Event{Type: llm.EventThinkingDelta, Index: s.block("thinking"), Text: r})
	}
	if parts, ok := contentParts(d); ok {
		for _, p := range parts {
			switch p.Type {
			case "text":
				if p.Text != "" {
					evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: s.block("text"), Text: p.Text})
				}
			case "thinking":
				for _, th := range p.Thinking {
					if th.Text != "" {
						evs = append(evs, llm.Event{Type: llm.EventThinkingDelta, Index: s.block("thinking"), Text: th.Text})
					}
				}
			}
		}
	} else if c := contentText(d); c != "" {
		evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: s.block("text"), Text: c})
	}
	if d.Refusal != "" {
		evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: s.block("text"), Text: string(d.Refusal)})
		if s.finish == "" {
			s.finish = "content_filter"
		}
	}
	for _, tc := range d.ToolCalls {
		idx := int64(tc.Index)
		t, ok := s.tools[idx]
		if !ok {
			s.cur = ""
			t = &toolCall{block: s.next}
			s.next++
			s.tools[idx] = t
			s.order = append(s.order, idx)
		}
		if tc.ID != "" && t.id == "" {
			t.id = string(tc.ID)
		}
		if tc.Function.Name != "" && !t.started {
			t.name += string(tc.Function.Name)
		}
		t.args.WriteString(string(tc.Function.Arguments))
		// Start once the name is known; arguments that came first are sent
		// as one delta then.
		if !t.started && t.name != "" {
			t.started = true
			if t.id == "" {
				t.id = fmt.Sprintf("call_%d", t.block)
			}
			evs = append(evs, llm.Event{Type: llm.EventToolUseStart, Index: t.block, ToolUseID: t.id, ToolName: t.name})
			if t.args.Len() > 0 {
				evs = append(evs, llm.Event{Type: llm.EventToolUseDelta, Index: t.block, Text: t.args.String()})
			}
		} else if t.started && tc.Function.Arguments != "" {
			evs = append(evs, llm.Event{Type: llm.EventToolUseDelta, Index: t.block, Text: string(tc.Function.Arguments)})
		}
	}
	return evs
}

// end closes the tool calls and reports usage and the stop reason.
func (s *chatState) end() []llm.Event {
	var evs []llm.Event
	if len(s.details) > 0 {
		// A thinking part of its own, with no text, whose signature holds
		// the reasoning_details to send back (detailsSig).
		sig, _ := json.Marshal(map[string]any{"reasoning_details": s.details})
		evs = append(evs, llm.Event{Type: llm.EventSignature, Index: s.next, Text: string(sig)})
		s.next++
	}
	sort.SliceStable(s.order, func(i, j int) bool { return s.tools[s.order[i]].block < s.tools[s.order[j]].block })
	for _, k := range s.order {
		t := s.tools[k]
		if !t.started {
			continue // no name ever came: nothing the agent could run
		}
		evs = append(evs, llm.Event{Type: llm.EventToolUseEnd, Index: t.block, ToolUseID: t.id, ToolName: t.name, Input: toolInput(t.args.String())})
	}
	if s.hasUsed {
		evs = append(evs, llm.Event{Type: llm.EventUsage, Usage: s.usage})
	}
	reason := llm.StopEndTurn
	switch s.finish {
	case "tool_calls", "function_call":
		reason = llm.StopToolUse
	case "length":
		reason = llm.StopMaxTokens
	case "content_filter":
		reason = llm.StopRefusal
	}
	if reason == llm.StopEndTurn && len(s.order) > 0 {
		reason = llm.StopToolUse // some servers say "stop" after tool calls
	}
	return append(evs, llm.Event{Type: llm.EventStop, StopReason: reason})
}
