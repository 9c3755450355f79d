package fakegemini

import (
	"time"

	"github.com/corvid-agent/corvid/internal/testkit/fakeserver"
)

// Response is one scripted answer to one streamGenerateContent request.
// The server sends one SSE chunk per piece of each block, then a final
// chunk with FinishReason and Usage, unless Fault says otherwise.
type Response struct {
	Blocks []Block
	// FinishReason defaults to "STOP". Any API value works ("MAX_TOKENS",
	// "SAFETY", "MALFORMED_FUNCTION_CALL", ...). "-" sends no finish
	// reason at all (a stream that ends early without an error).
	FinishReason string
	Usage        Usage
	// ChunkSize is how many bytes (whole runes) of text go in one chunk; 0
	// means 8.
	ChunkSize int
	// EventDelay is slept before every chunk.
	EventDelay time.Duration
	Fault      Fault
}

// BlockKind discriminates Block.
type BlockKind string

const (
	KindText         BlockKind = "text"
	KindThought      BlockKind = "thought"
	KindFunctionCall BlockKind = "function_call"
)

// Block is one piece of a scripted response. Gemini sends function calls
// whole, in one part.
type Block struct {
	Kind BlockKind
	Text string
	Name string         // function call
	Args map[string]any // function call
	ID   string         // function call id; Gemini usually sends none
	// Signature is sent as the part's thoughtSignature (bytes; base64 on
	// the wire) on the block's first chunk.
	Signature []byte
}

// Text is a text block.
func Text(s string) Block { return Block{Kind: KindText, Text: s} }

// Thought is thought-summary text (parts with "thought": true).
func Thought(s string) Block { return Block{Kind: KindThought, Text: s} }

// FunctionCall is a function call part.
func FunctionCall(name string, args map[string]any) Block {
	return Block{Kind: KindFunctionCall, Name: name, Args: args}
}

// Usage is the usageMetadata of the last chunk. PromptTokens includes
// CachedTokens, as on the wire.
type Usage struct {
	PromptTokens     int32
	CandidatesTokens int32
	CachedTokens     int32
	ThoughtsTokens   int32
}

// FaultKind says how a response goes wrong. The kinds are fakeserver's,
// which applies them, counting chunks as events; in this wire format a
// FaultHTTP answers Status with {"error": {"code", "message", "status"}},
// and a FaultStreamError is a `data: {"error": {...}}` chunk that ends the
// stream.
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

// Fault is a failure injected into one response.
type Fault struct {
	Kind        FaultKind
	Status      int    // FaultHTTP, FaultStreamError (the error's code)
	StatusText  string // e.g. "RESOURCE_EXHAUSTED"
	Message     string
	RetryAfter  string // FaultHTTP: retry-after header value, in seconds
	AfterEvents int
	Stall       time.Duration
}

// RateLimit is an HTTP 429 RESOURCE_EXHAUSTED with a retry-after header of
// the given duration, rounded up to whole seconds (no header when 0).
func RateLimit(retryAfter time.Duration) Fault {
	return Fault{Kind: FaultHTTP, Status: 429, StatusText: "RESOURCE_EXHAUSTED", Message: "Resource has been exhausted (e.g. check quota).",
		RetryAfter: fakeserver.RetryAfterSeconds(retryAfter)}
}

// ServerError is an HTTP 500 INTERNAL.
func ServerError() Fault {
	return Fault{Kind: FaultHTTP, Status: 500, StatusText: "INTERNAL", Message: "An internal error has occurred."}
}

// Overloaded is an HTTP 503 UNAVAILABLE, what Gemini answers when a model
// is overloaded.
func Overloaded() Fault {
	return Fault{Kind: FaultHTTP, Status: 503, StatusText: "UNAVAILABLE", Message: "The model is overloaded. Please try again later."}
}

// HTTPError is any HTTP error answer.
func HTTPError(status int, statusText, message string) Fault {
	return Fault{Kind: FaultHTTP, Status: status, StatusText: statusText, Message: message}
}

// StreamError sends an error chunk after the given number of chunks.
func StreamError(afterEvents, status int, statusText, message string) Fault {
	return Fault{Kind: FaultStreamError, AfterEvents: afterEvents, Status: status, StatusText: statusText, Message: message}
}

// Cut drops the connection after the given number of chunks.
func Cut(afterEvents int) Fault { return Fault{Kind: FaultCut, AfterEvents: afterEvents} }

// Stall stops writing for d after the given number of chunks.
func Stall(afterEvents int, d time.Duration) Fault {
	return Fault{Kind: FaultStall, AfterEvents: afterEvents, Stall: d}
}

// Malformed writes a data line that is not JSON after the given number of
// chunks.
func Malformed(afterEvents int) Fault { return Fault{Kind: FaultMalformed, AfterEvents: afterEvents} }
