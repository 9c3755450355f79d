package providers

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
	"github.com/corvid-agent/corvid/internal/testkit/fakegemini"
	"github.com/corvid-agent/corvid/internal/testkit/fakeopenai"
)

// reply is one model answer, written once and rendered by each provider's
// fake in its own wire format.
type reply struct {
	thinking string
	// signature is the opaque reasoning token a provider wants echoed
	// back: the thinking block's signature (Anthropic), the reasoning
	// item's encrypted content (Responses), the function call's thought
	// signature (Gemini). Chat Completions has none.
	signature string
	text      string
	tool      *toolCall
	usage     tokens
	fault     fault
	// delay is slept before every event: a slow model.
	delay time.Duration
}

type toolCall struct {
	id, name, args string
}

// tokens is what a fake reports. Each wire format counts them its own way;
// used is the total corvid must show as usage_update.used.
type tokens struct {
	input, cached, output int64
}

// fault is how a reply goes wrong, if it does.
type fault int

const (
	noFault      fault = iota
	midError           // an error event after the first text delta
	midStall           // silence for an hour after the first text delta
	rateLimited        // HTTP 429 with retry-after: 1 instead of the stream
	headersStall       // silence for an hour before the response headers
)

// chunk is the size of the pieces the fakes stream text, reasoning and
// tool arguments in: small, so that everything takes several deltas.
const chunk = 5

// serverMessage is what a fake says when it fails a stream; one clause, no
// period, so that corvid's message stays one sentence.
const serverMessage = "upstream model crashed"

// recorded is one request a fake received.
type recorded struct {
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// fake is a provider's fake server behind one interface.
type fake interface {
	enqueue(r reply)
	requests() []recorded
	pending() int
}

// provider describes how one provider is reached, scripted and checked.
type provider struct {
	name  string // as in -m
	title string // what the user knows it by; errors name it
	model string // -m value
	// keyVar and baseVar are the environment variables of its key and
	// base URL; keyVar "" for a keyless local server.
	keyVar, baseVar string
	start           func(t *testing.T) (fake, string) // the fake and its base URL
	// used is the total the fake reports for t (input, cache and output
	// tokens, however the wire format splits them).
	used func(t tokens) int64
	// toolResult finds the result of the tool call id in a request body.
	toolResult func(body map[string]any, call toolCall) (any, bool)
	// auth returns the credential a request carried ("" if none).
	auth func(h http.Header) string
	// streamsToolArgs is false when the wire format delivers a function
	// call whole (Gemini).
	streamsToolArgs bool
	// signatures is true when the wire format carries reasoning state
	// that must come back in the next request.
	signatures bool
}

// keys are set for every provider at once, so that a request carrying the
// wrong one is caught.
var keys = map[string]string{
	"ANTHROPIC_API_KEY":  "sk-ant-test-anthropic-key",
	"OPENAI_API_KEY":     "sk-test-openai-key",
	"GEMINI_API_KEY":     "gm-test-gemini-key",
	"OPENROUTER_API_KEY": "sk-or-test-openrouter-key",
}

var providers = []provider{
	{
		name: "anthropic", title: "Anthropic", model: "anthropic:claude-sonnet-4-6",
		keyVar: "ANTHROPIC_API_KEY", baseVar: "ANTHROPIC_BASE_URL",
		start: func(t *testing.T) (fake, string) {
			f := fakeanthropic.New(t)
			return anthropicFake{f}, f.URL()
		},
		used: func(u tokens) int64 { return u.input + u.cached + u.output },
		toolResult: func(body map[string]any, call toolCall) (any, bool) {
			return find(body, func(m map[string]any) bool { return m["type"] == "tool_result" && m["tool_use_id"] == call.id })
		},
		auth:            func(h http.Header) string { return h.Get("X-Api-Key") },
		streamsToolArgs: true,
		signatures:      true,
	},
	{
		name: "openai", title: "OpenAI", model: "openai:gpt-5",
		keyVar: "OPENAI_API_KEY", baseVar: "OPENAI_BASE_URL",
		start: startOpenAI,
		used:  func(u tokens) int64 { return u.input + u.cached + u.output },
		toolResult: func(body map[string]any, call toolCall) (any, bool) {
			return find(body, func(m map[string]any) bool { return m["type"] == "function_call_output" && m["call_id"] == call.id })
		},
		auth:            bearer,
		streamsToolArgs: true,
		signatures:      true,
	},
	{
		name: "openrouter", title: "OpenRouter", model: "openrouter:anthropic/claude-sonnet-4.6",
		keyVar: "OPENROUTER_API_KEY", baseVar: "OPENROUTER_BASE_URL",
		start:           startOpenAI,
		used:            func(u tokens) int64 { return u.input + u.cached + u.output },
		toolResult:      chatToolResult,
		auth:            bearer,
		streamsToolArgs: true,
	},
	{
		name: "ollama", title: "Ollama", model: "ollama:qwen3:8b",
		baseVar:         "OLLAMA_BASE_URL",
		start:           startOpenAI,
		used:            func(u tokens) int64 { return u.input + u.cached + u.output },
		toolResult:      chatToolResult,
		auth:            bearer,
		streamsToolArgs: true,
	},
	{
		name: "gemini", title: "Gemini", model: "gemini:gemini-2.5-flash",
		keyVar: "GEMINI_API_KEY", baseVar: "GEMINI_BASE_URL",
		start: func(t *testing.T) (fake, string) {
			f := fakegemini.New(t)
			return geminiFake{f}, f.URL()
		},
		used: func(u tokens) int64 { return u.input + u.cached + u.output },
		toolResult: func(body map[string]any, call toolCall) (any, bool) {
			return find(body, func(m map[string]any) bool {
				fr, ok := m["functionResponse"].(map[string]any)
				return ok && fr["name"] == call.name
			})
		},
		auth:       func(h http.Header) string { return h.Get("X-Goog-Api-Key") },
		signatures: true,
	},
}

func startOpenAI(t *testing.T) (fake, string) {
	f := fakeopenai.New(t)
	return openaiFake{f}, f.BaseURL()
}

func bearer(h http.Header) string {
	v := h.Get("Authorization")
	if len(v) > len("Bearer ") && v[:len("Bearer ")] == "Bearer " {
		return v[len("Bearer "):]
	}
	return v
}

func chatToolResult(body map[string]any, call toolCall) (any, bool) {
	return find(body, func(m map[string]any) bool { return m["role"] == "tool" && m["tool_call_id"] == call.id })
}

// find returns the first object in v, depth first, that match accepts.
func find(v any, match func(map[string]any) bool) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if match(x) {
			return x, true
		}
		for _, c := range x {
			if got, ok := find(c, match); ok {
				return got, true
			}
		}
	case []any:
		for _, c := range x {
			if got, ok := find(c, match); ok {
				return got, true
			}
		}
	}
	return nil, false
}

// --- anthropic

type anthropicFake struct{ s *fakeanthropic.Server }

func (f anthropicFake) pending() int { return f.s.Pending() }

func (f anthropicFake) requests() []recorded {
	var out []recorded
	for _, r := range f.s.Requests() {
		var body map[string]any
		_ = json.Unmarshal(r.Raw, &body)
		out = append(out, recorded{Header: r.Header, Body: body, Raw: r.Raw})
	}
	return out
}

func (f anthropicFake) enqueue(r reply) {
	resp := fakeanthropic.Response{ChunkSize: chunk, EventDelay: r.delay, Usage: fakeanthropic.Usage{
		InputTokens: r.usage.input, CacheReadInputTokens: r.usage.cached, OutputTokens: r.usage.output}}
	// Events: message_start, then per block a start, deltas, a stop. The
	// first text delta is event 3 when text comes first.
	if r.thinking != "" {
		resp.Blocks = append(resp.Blocks, fakeanthropic.Thinking(r.thinking, r.signature))
	}
	if r.text != "" {
		resp.Blocks = append(resp.Blocks, fakeanthropic.Text(r.text))
	}
	if c := r.tool; c != nil {
		resp.Blocks = append(resp.Blocks, fakeanthropic.ToolUse(c.id, c.name, c.args))
	}
	switch r.fault {
	case midError:
		resp.Fault = fakeanthropic.StreamError(3, "api_error", serverMessage)
	case midStall:
		resp.Fault = fakeanthropic.Stall(3, time.Hour)
	case headersStall:
		resp.Fault = fakeanthropic.Stall(0, time.Hour)
	case rateLimited:
		resp.Fault = fakeanthropic.RateLimit(time.Second)
	}
	f.s.Enqueue(resp)
}

// --- openai (responses and chat)

type openaiFake struct{ s *fakeopenai.Server }

func (f openaiFake) pending() int { return f.s.Pending() }

func (f openaiFake) requests() []recorded {
	var out []recorded
	for _, r := range f.s.Requests() {
		out = append(out, recorded{Header: r.Header, Body: r.Body, Raw: r.Raw})
	}
	return out
}

// enqueue scripts a reply; the fake renders it as chat chunks or Responses
// events, depending on the endpoint it is asked on.
func (f openaiFake) enqueue(r reply) {
	resp := fakeopenai.Response{ChunkSize: chunk, EventDelay: r.delay, Usage: fakeopenai.Usage{
		InputTokens: r.usage.input + r.usage.cached, CachedTokens: r.usage.cached, OutputTokens: r.usage.output}}
	if r.thinking != "" {
		// "reasoning" is the field OpenRouter and Ollama stream it in; the
		// Responses endpoint sends it as a reasoning summary.
		b := fakeopenai.ReasoningIn("reasoning", r.thinking)
		b.EncryptedContent = r.signature
		resp.Blocks = append(resp.Blocks, b)
	}
	if r.text != "" {
		resp.Blocks = append(resp.Blocks, fakeopenai.Text(r.text))
	}
	if c := r.tool; c != nil {
		resp.Blocks = append(resp.Blocks, fakeopenai.ToolCall(c.id, c.name, c.args))
	}
	// The first text delta of a text-only reply is event 1 on chat (after
	// the role chunk) and event 4 on responses (after created,
	// in_progress, output_item.added, content_part.added): a fault after
	// five events comes after a text delta on both.
	switch r.fault {
	case midError:
		resp.Fault = fakeopenai.StreamError(5, "server_error", serverMessage)
	case midStall:
		resp.Fault = fakeopenai.Stall(5, time.Hour)
	case headersStall:
		resp.Fault = fakeopenai.Stall(0, time.Hour)
	case rateLimited:
		resp.Fault = fakeopenai.RateLimit(time.Second)
	}
	f.s.Enqueue(resp)
}

// --- gemini

type geminiFake struct{ s *fakegemini.Server }

func (f geminiFake) pending() int { return f.s.Pending() }

func (f geminiFake) requests() []recorded {
	var out []recorded
	for _, r := range f.s.Requests() {
		out = append(out, recorded{Header: r.Header, Body: r.Body, Raw: r.Raw})
	}
	return out
}

func (f geminiFake) enqueue(r reply) {
	// Gemini counts cached tokens inside the prompt count.
	resp := fakegemini.Response{ChunkSize: chunk, EventDelay: r.delay, Usage: fakegemini.Usage{
		PromptTokens: int32(r.usage.input + r.usage.cached), CachedTokens: int32(r.usage.cached), CandidatesTokens: int32(r.usage.output)}}
	if r.thinking != "" {
		resp.Blocks = append(resp.Blocks, fakegemini.Thought(r.thinking))
	}
	if r.text != "" {
		resp.Blocks = append(resp.Blocks, fakegemini.Text(r.text))
	}
	if c := r.tool; c != nil {
		var args map[string]any
		_ = json.Unmarshal([]byte(c.args), &args)
		b := fakegemini.FunctionCall(c.name, args)
		if r.signature != "" {
			b.Signature, _ = base64.StdEncoding.DecodeString(r.signature)
		}
		resp.Blocks = append(resp.Blocks, b)
	}
	// Every chunk is one event: a fault after event 2 follows two text
	// pieces.
	switch r.fault {
	case midError:
		resp.Fault = fakegemini.StreamError(2, 500, "INTERNAL", serverMessage)
	case midStall:
		resp.Fault = fakegemini.Stall(2, time.Hour)
	case headersStall:
		resp.Fault = fakegemini.Stall(0, time.Hour)
	case rateLimited:
		resp.Fault = fakegemini.RateLimit(time.Second)
	}
	f.s.Enqueue(resp)
}
