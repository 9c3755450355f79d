package fakeanthropic

import (
	"time"

	"github.com/corvid-agent/corvid/internal/testkit/fakeserver"
)

// Response is one scripted answer to one POST /v1/messages. The server
// streams its Blocks in order, then a message_delta with StopReason and
// Usage, then message_stop, unless Fault says otherwise.
type Response struct {
	Blocks []Block
	// StopReason defaults to "tool_use" when a block is a tool call and to
	// "end_turn" otherwise. Any API value works ("max_tokens", "refusal",
	// "pause_turn", "stop_sequence", ...).
	StopReason string
	Usage      Usage
	// ChunkSize is how many bytes (whole runes) of text, thinking or tool
	// input go in one delta; 0 means 8, so most blocks take several deltas.
	ChunkSize int
	// EventDelay is slept before every event after message_start: a slow
	// model, for cancellation tests.
	EventDelay time.Duration
	// Fault, when its Kind is not NoFault, replaces or breaks the answer.
	Fault Fault
	// MessageID defaults to "msg_fake_<n>", n counting responses from 1.
	MessageID string
}

// BlockKind discriminates Block.
type BlockKind string

const (
	KindText             BlockKind = "text"
	KindThinking         BlockKind = "thinking"
	KindRedactedThinking BlockKind = "redacted_thinking"
	KindToolUse          BlockKind = "tool_use"
)

// Block is one content block of a scripted response.
type Block struct {
	Kind      BlockKind
	Text      string // text, or the thinking text
	Signature string // thinking: sent in one signature_delta after the text
	Data      string // redacted_thinking: the opaque payload
	ID        string // tool_use
	Name      string // tool_use
	Input     string // tool_use: JSON, streamed as input_json_delta pieces ("" streams nothing: input {})
}

// Text is a text block.
func Text(s string) Block { return Block{Kind: KindText, Text: s} }

// Thinking is a thinking block with its signature.
func Thinking(text, signature string) Block {
	return Block{Kind: KindThinking, Text: text, Signature: signature}
}

// RedactedThinking is a redacted_thinking block carrying data.
func RedactedThinking(data string) Block { return Block{Kind: KindRedactedThinking, Data: data} }

// ToolUse is a tool call; inputJSON is streamed in several pieces.
func ToolUse(id, name, inputJSON string) Block {
	return Block{Kind: KindToolUse, ID: id, Name: name, Input: inputJSON}
}

// Usage is the token accounting the server reports: input and cache counts
// in message_start, all four (cumulative) in message_delta.
type Usage struct {
	InputTokens              int64
	OutputTokens             int64
	CacheReadInputTokens     int64
	CacheCreationInputTokens int64
}

// FaultKind says how a response goes wrong. The kinds are fakeserver's,
// which applies them; in this wire format a FaultHTTP answers Status with a
// JSON error body of ErrorType and Message, and a FaultStreamError is an
// `event: error` with ErrorType and Message that ends the stream. Pings do
// not count as events.
type FaultKind = fakeserver.FaultKind

// The kinds of Fault; FaultMalformed is not offered here.
const (
	NoFault          = fakeserver.NoFault
	FaultHTTP        = fakeserver.FaultHTTP
	FaultStreamError = fakeserver.FaultStreamError
	FaultCut         = fakeserver.FaultCut
	FaultStall       = fakeserver.FaultStall
)

// Fault is a failure injected into one response. AfterEvents counts the
// stream events written before it, pings excluded: message_start is 1, the
// first content_block_start 2, its first delta 3, and so on.
type Fault struct {
	Kind        FaultKind
	Status      int    // FaultHTTP
	ErrorType   string // FaultHTTP, FaultStreamError: e.g. "rate_limit_error"
	Message     string // FaultHTTP, FaultStreamError
	RetryAfter  string // FaultHTTP: retry-after header value, in seconds
	AfterEvents int    // FaultStreamError, FaultCut, FaultStall
	Stall       time.Duration
}

// RateLimit is an HTTP 429 rate_limit_error with a retry-after header of
// the given duration, rounded up to whole seconds ("" header when 0).
func RateLimit(retryAfter time.Duration) Fault {
	return Fault{Kind: FaultHTTP, Status: 429, ErrorType: "rate_limit_error",
		Message:    "Number of request tokens has exceeded your per-minute rate limit",
		RetryAfter: fakeserver.RetryAfterSeconds(retryAfter)}
}

// ServerError is an HTTP 500 api_error.
func ServerError() Fault {
	return Fault{Kind: FaultHTTP, Status: 500, ErrorType: "api_error", Message: "Internal server error"}
}

// Overloaded is an HTTP 529 overloaded_error.
func Overloaded() Fault {
	return Fault{Kind: FaultHTTP, Status: 529, ErrorType: "overloaded_error", Message: "Overloaded"}
}

// HTTPError is any HTTP error answer, e.g. HTTPError(401,
// "authentication_error", "invalid x-api-key").
func HTTPError(status int, errorType, message string) Fault {
	return Fault{Kind: FaultHTTP, Status: status, ErrorType: errorType, Message: message}
}

// StreamError sends an `event: error` after the given number of events.
func StreamError(afterEvents int, errorType, message string) Fault {
	return Fault{Kind: FaultStreamError, AfterEvents: afterEvents, ErrorType: errorType, Message: message}
}

// Cut closes the connection after the given number of events.
func Cut(afterEvents int) Fault { return Fault{Kind: FaultCut, AfterEvents: afterEvents} }

// Stall stops writing for d after the given number of events.
func Stall(afterEvents int, d time.Duration) Fault {
	return Fault{Kind: FaultStall, AfterEvents: afterEvents, Stall: d}
}
