package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"iter"
	"sort"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/corvid-agent/corvid/internal/llm"
)

// chatParams translates a request into Chat Completions parameters.
//
// Tool results, which corvid keeps in user messages, become role "tool"
// messages right after the assistant message that called them, as the API
// requires; their images follow in a user message (tool messages carry text
// only). Thinking parts are not sent back, except as reasoning_content on
// assistant messages with tool calls for the providers whose API requires
// it (echoReasoning), and as the reasoning_details they came with for the
// providers that want those back (echoDetails); other servers reject or
// ignore the fields.
func (m *model) chatParams(req llm.Request) sdk.ChatCompletionNewParams {
	var msgs []sdk.ChatCompletionMessageParamUnion
	if req.System != "" {
		if m.official {
			msgs = append(msgs, sdk.DeveloperMessage(req.System))
		} else {
			msgs = append(msgs, sdk.SystemMessage(req.System))
		}
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleAssistant:
			if a, ok := chatAssistant(msg, echoReasoning[m.p.Name], echoDetails[m.p.Name]); ok {
				msgs = append(msgs, a)
			}
		default:
			msgs = append(msgs, chatUser(msg)...)
		}
	}
	p := sdk.ChatCompletionNewParams{
		Model:         req.Model,
		Messages:      msgs,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if req.MaxTokens > 0 {
		if m.official {
			p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			p.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	m.chatThinking(&p, req)
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema(t.InputSchema)}
		if t.Description != "" {
			fd.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fd))
	}
	return p
}

// echoReasoning lists the presets whose API wants an assistant message's
// reasoning back as reasoning_content when that message carries tool calls.
// DeepSeek: in thinking mode with tools (deepseek-reasoner, V3.2) the next
// request of the tool loop is refused without it. No other preset documents
// the field in requests: OpenRouter, Groq, Mistral, xAI, Together,
// Fireworks, Cerebras and the local servers are sent none.
var echoReasoning = map[string]bool{"deepseek": true}

// echoDetails lists the presets that stream delta.reasoning_details and
// want them back, unmodified, on the assistant message (OpenRouter:
// "Preserving reasoning blocks"; through it, Gemini 3 refuses a function
// call whose thought signature, an encrypted entry, does not come back).
var echoDetails = map[string]bool{"openrouter": true}

// detailsSig is the Signature of the thinking part that carries a
// response's reasoning_details, as chatState.end yields it.
type detailsSig struct {
	ReasoningDetails []json.RawMessage `json:"reasoning_details"`
}

func chatAssistant(msg llm.Message, withReasoning, withDetails bool) (sdk.ChatCompletionMessageParamUnion, bool) {
	var text, reasoning strings.Builder
	var details []json.RawMessage
	a := sdk.ChatCompletionAssistantMessageParam{}
	for _, part := range msg.Parts {
		switch part.Type {
		case llm.PartThinking:
			reasoning.WriteString(part.Text)
			var sig detailsSig
			if withDetails && strings.HasPrefix(part.Signature, `{"reasoning_details"`) && json.Unmarshal([]byte(part.Signature), &sig) == nil {
				details = append(details, sig.ReasoningDetails...)
			}
		case llm.PartText:
			text.WriteString(part.Text)
		case llm.PartToolUse:
			args := string(part.Input)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       part.ToolUseID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: part.ToolName, Arguments: args},
				},
			})
		}
	}
	if text.Len() == 0 && len(a.ToolCalls) == 0 {
		return sdk.ChatCompletionMessageParamUnion{}, false
	}
	if text.Len() > 0 {
		a.Content.OfString = param.NewOpt(text.String())
	}
	extra := map[string]any{}
	if withReasoning && len(a.ToolCalls) > 0 && reasoning.Len() > 0 {
		extra["reasoning_content"] = reasoning.String()
	}
	if len(details) > 0 {
		extra["reasoning_details"] = details
	}
	if len(extra) > 0 {
		a.SetExtraFields(extra)
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, true
}

func chatUser(msg llm.Message) []sdk.ChatCompletionMessageParamUnion {
	var out []sdk.ChatCompletionMessageParamUnion
	var parts, resultImages []sdk.ChatCompletionContentPartUnionParam
	for _, part := range msg.Parts {
		switch part.Type {
		case llm.PartToolResult:
			out = append(out, sdk.ToolMessage(toolResultText(part), part.ToolUseID))
			for _, img := range part.Images {
				resultImages = append(resultImages, imagePart(img))
			}
		case llm.PartText:
			parts = append(parts, sdk.TextContentPart(part.Text))
		case llm.PartImage:
			parts = append(parts, imagePart(part))
		}
	}
	if len(resultImages) > 0 {
		out = append(out, sdk.UserMessage(append([]sdk.ChatCompletionContentPartUnionParam{
			sdk.TextContentPart("Images returned by the tool calls above:")}, resultImages...)))
	}
	if len(parts) == 1 && parts[0].OfText != nil {
		out = append(out, sdk.UserMessage(parts[0].OfText.Text))
	} else if len(parts) > 0 {
		out = append(out, sdk.UserMessage(parts))
	}
	return out
}

func imagePart(p llm.Part) sdk.ChatCompletionContentPartUnionParam {
	return sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: dataURL(p)})
}

func dataURL(p llm.Part) string {
	mt := p.MimeType
	if mt == "" {
		mt = "image/png"
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}

// chatTool is a tool call being assembled from deltas.
type chatTool struct {
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
	tools   map[int64]*chatTool
	order   []int64
	finish  string
	usage   llm.Usage
	hasUsed bool
	details []map[string]any // OpenRouter's reasoning_details, merged
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
		var fail httpFailure
		attemptCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		watch := llm.NewIdleWatch(m.idleTimeout(), cancel)
		defer watch.Stop()
		stream := m.chat.NewStreaming(attemptCtx, m.chatParams(req), fail.capture(), idleOption(watch))
		defer stream.Close()
		st := &chatState{tools: map[int64]*chatTool{}}
		for stream.Next() {
			chunk := stream.Current()
			if chunk.JSON.Usage.Valid() && (chunk.Usage.PromptTokens > 0 || chunk.Usage.CompletionTokens > 0) {
				// llm.Usage counts input without the cached part (as Anthropic
				// does), so that pricing each kind once adds up.
				cached, written := chunk.Usage.PromptTokensDetails.CachedTokens, chunk.Usage.PromptTokensDetails.CacheWriteTokens
				st.usage = llm.Usage{
					InputTokens:      max(0, chunk.Usage.PromptTokens-cached-written),
					OutputTokens:     outputTokens(chunk.Usage),
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
					st.finish = ch.FinishReason
				}
			}
			if !yieldAll(watch, yield, evs) {
				return
			}
		}
		watch.Stop()
		switch err := stream.Err(); {
		case ctx.Err() != nil:
			yield(llm.Event{}, ctx.Err())
			return
		case watch.Fired():
			yield(llm.Event{}, m.errStalled())
			return
		case err != nil:
			yield(llm.Event{}, m.wrap(ctx, err, &fail))
			return
		}
		if st.finish == "" {
			yield(llm.Event{}, m.cutError(&fail))
			return
		}
		for _, ev := range st.end() {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// outputTokens is what the response generated. OpenAI counts reasoning
// tokens inside completion_tokens; xAI leaves them out (completion 1,
// reasoning 290, total 303 for 12 prompt tokens) but bills them as output.
// They are added when total_tokens shows they were left out.
func outputTokens(u sdk.CompletionUsage) int64 {
	out, r := u.CompletionTokens, u.CompletionTokensDetails.ReasoningTokens
	if r > 0 && u.TotalTokens >= u.PromptTokens+out+r {
		out += r
	}
	return out
}

// reasoningDelta reads the non-standard reasoning fields servers add to a
// delta: reasoning_content (DeepSeek, vLLM, llama.cpp, LM Studio) and
// reasoning (OpenRouter, Ollama, Groq).
func reasoningDelta(d sdk.ChatCompletionChunkChoiceDelta) string {
	for _, name := range []string{"reasoning_content", "reasoning"} {
		// Extra fields are never Valid (the SDK has no type for them); their
		// raw JSON is what counts.
		f, ok := d.JSON.ExtraFields[name]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
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
func contentParts(d sdk.ChatCompletionChunkChoiceDelta) (parts []contentPart, ok bool) {
	raw := strings.TrimSpace(d.JSON.Content.Raw())
	if !strings.HasPrefix(raw, "[") {
		return nil, false
	}
	if json.Unmarshal([]byte(raw), &parts) != nil {
		return nil, false
	}
	return parts, true
}

// addDetails keeps the entries of a delta's reasoning_details (OpenRouter)
// as they are, except that a reasoning.text or reasoning.summary entry
// continuing the last one (same type and index) is joined to it, as
// OpenRouter's own clients accumulate them.
func (s *chatState) addDetails(d sdk.ChatCompletionChunkChoiceDelta) {
	f, ok := d.JSON.ExtraFields["reasoning_details"]
	if !ok {
		return
	}
	var list []map[string]any
	if json.Unmarshal([]byte(f.Raw()), &list) != nil {
		return
	}
	for _, e := range list {
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

func (s *chatState) delta(d sdk.ChatCompletionChunkChoiceDelta) []llm.Event {
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
	} else if d.Content != "" {
		evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: s.block("text"), Text: d.Content})
	}
	if d.Refusal != "" {
		evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: s.block("text"), Text: d.Refusal})
		if s.finish == "" {
			s.finish = "content_filter"
		}
	}
	for _, tc := range d.ToolCalls {
		t, ok := s.tools[tc.Index]
		if !ok {
			s.cur = ""
			t = &chatTool{block: s.next}
			s.next++
			s.tools[tc.Index] = t
			s.order = append(s.order, tc.Index)
		}
		if tc.ID != "" && t.id == "" {
			t.id = tc.ID
		}
		if tc.Function.Name != "" && !t.started {
			t.name += tc.Function.Name
		}
		t.args.WriteString(tc.Function.Arguments)
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
			evs = append(evs, llm.Event{Type: llm.EventToolUseDelta, Index: t.block, Text: tc.Function.Arguments})
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
