package fakeopenai

import (
	"time"

	"github.com/corvid-agent/corvid/internal/testkit/fakeserver"
)

// Response is one scripted answer to one request, on either endpoint: the
// server renders the same script as Chat Completions chunks or as Responses
// API events, depending on the path it was asked on.
type Response struct {
	Blocks []Block
	// FinishReason uses the Chat Completions vocabulary: "stop",
	// "tool_calls", "length", "content_filter". Empty means "tool_calls"
	// when a block is a tool call and "stop" otherwise. On the Responses
	// endpoint "length" and "content_filter" become response.incomplete
	// (max_output_tokens, content_filter); the others response.completed.
	FinishReason string
	// Usage is reported in the final usage chunk (chat, only when the
	// request asked for stream_options.include_usage) or in
	// response.completed (responses).
	Usage Usage
	// ChunkSize is how many bytes (whole runes) of text, reasoning or tool
	// arguments go in one delta; 0 means 8, so most blocks take several.
	ChunkSize int
	// EventDelay is slept before every event: a slow model.
	EventDelay time.Duration
	// Fault, when its Kind is not NoFault, replaces or breaks the answer.
	Fault Fault
	// Model is echoed in the stream; empty echoes the request's model.
	Model string
}

// BlockKind discriminates Block.
type BlockKind string

const (
	KindText      BlockKind = "text"
	KindReasoning BlockKind = "reasoning"
	KindToolCall  BlockKind = "tool_call"
)

// Block is one piece of a scripted response.
type Block struct {
	Kind BlockKind
	Text string // text, or the reasoning text
	// Field is the chat delta field reasoning is streamed in:
	// "reasoning_content" (DeepSeek, vLLM, llama.cpp; the default) or
	// "reasoning" (OpenRouter, Ollama). Ignored on the Responses endpoint,
	// where reasoning is a summary (response.reasoning_summary_text.delta).
	Field string
	// EncryptedContent is sent on the Responses reasoning item when set.
	EncryptedContent string
	ID               string // tool call id (call_id); default call_<n>
	Name             string // tool call function name
	Arguments        string // tool call arguments JSON, streamed in pieces
}

// Text is a text block.
func Text(s string) Block { return Block{Kind: KindText, Text: s} }

// Reasoning is reasoning text, streamed as reasoning_content (chat) or a
// reasoning summary (responses).
func Reasoning(s string) Block { return Block{Kind: KindReasoning, Text: s} }

// ReasoningIn is reasoning streamed in the given chat delta field.
func ReasoningIn(field, s string) Block { return Block{Kind: KindReasoning, Text: s, Field: field} }

// ToolCall is a function call whose arguments are streamed in pieces.
func ToolCall(id, name, arguments string) Block {
	return Block{Kind: KindToolCall, ID: id, Name: name, Arguments: arguments}
}

// Usage is the token accounting the server reports. InputTokens includes
// CachedTokens, as on the wire.
type Usage struct {
	InputTokens     int64
	OutputTokens    int64
	CachedTokens    int64
	ReasoningTokens int64
}

// FaultKind says how a response goes wrong. The kinds are fakeserver's,
// which applies them; in these wire formats a FaultHTTP answers Status with
// a JSON error body {"error": {"message", "type", "code"}}, and a
// FaultStreamError is a `data: {"error": {...}}` chunk on chat and an
// `event: error` on responses, either ending the stream.
type FaultKind = fakeserver.FaultKind

// The kinds of Fault.
const (
	NoFault          = fakeserver.NoFault
	FaultHTTP        = fakeserver.FaultHTTP
	FaultStreamError = fakeserver.FaultStreamError
	FaultCut         = fakeserver.FaultCut
	FaultStall       = fakeserver.FaultStall
	FaultMalformed   = fakeserver.FaultMalformed
)

// Fault is a failure injected into one response. AfterEvents counts the SSE
// events written before it ([DONE] excluded).
type Fault struct {
	Kind        FaultKind
	Status      int    // FaultHTTP
	Code        string // FaultHTTP, FaultStreamError: e.g. "rate_limit_exceeded"
	Type        string // FaultHTTP, FaultStreamError: e.g. "requests"
	Message     string // FaultHTTP, FaultStreamError
	RetryAfter  string // FaultHTTP: retry-after header value, in seconds
	AfterEvents int    // FaultStreamError, FaultCut, FaultStall, FaultMalformed
	Stall       time.Duration
}

// RateLimit is an HTTP 429 rate_limit_exceeded with a retry-after header of
// the given duration, rounded up to whole seconds (no header when 0).
func RateLimit(retryAfter time.Duration) Fault {
	return Fault{Kind: FaultHTTP, Status: 429, Code: "rate_limit_exceeded", Type: "requests",
		Message: "Rate limit reached for requests", RetryAfter: fakeserver.RetryAfterSeconds(retryAfter)}
}

// ServerError is an HTTP 500 server_error.
func ServerError() Fault {
	return Fault{Kind: FaultHTTP, Status: 500, Code: "server_error", Type: "server_error",
		Message: "The server had an error while processing your request"}
}

// Overloaded is an HTTP 503 overloaded answer.
func Overloaded() Fault {
	return Fault{Kind: FaultHTTP, Status: 503, Code: "overloaded", Type: "overloaded_error",
		Message: "The engine is currently overloaded, please try again later"}
}

// HTTPError is any HTTP error answer, e.g. HTTPError(401,
// "invalid_api_key", "Incorrect API key provided").
func HTTPError(status int, code, message string) Fault {
	return Fault{Kind: FaultHTTP, Status: status, Code: code, Type: "invalid_request_error", Message: message}
}

// StreamError sends an error event after the given number of events.
func StreamError(afterEvents int, code, message string) Fault {
	return Fault{Kind: FaultStreamError, AfterEvents: afterEvents, Code: code, Type: code, Message: message}
}

// Cut drops the connection after the given number of events.
func Cut(afterEvents int) Fault { return Fault{Kind: FaultCut, AfterEvents: afterEvents} }

// Stall stops writing for d after the given number of events.
func Stall(afterEvents int, d time.Duration) Fault {
	return Fault{Kind: FaultStall, AfterEvents: afterEvents, Stall: d}
}

// Malformed writes a data line that is not JSON after the given number of
// events.
func Malformed(afterEvents int) Fault { return Fault{Kind: FaultMalformed, AfterEvents: afterEvents} }
