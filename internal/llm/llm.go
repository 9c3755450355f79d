// Package llm is corvid's provider-neutral model API: messages made of parts,
// tool specs, a streaming request, and the small closed set of stream events
// every provider translates its wire format into.
//
// Start with Model (what a provider implements) and Event (what it yields).
// Provider packages live under internal/llm/<name> and are the only importers
// of their SDKs; nothing here knows about any vendor. Two things every
// provider shares live here so that none can forget them: the HTTP client
// that keeps the key on the base URL's origin (HTTPClient) and the scrubber
// that keeps the key and configured header values out of errors
// (ScrubError).
package llm

import (
	"context"
	"encoding/json"
	"iter"
	"time"

	"github.com/corvid-agent/corvid/internal/usererr"
)

// Role says who produced a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PartType discriminates Part.
type PartType string

const (
	PartText       PartType = "text"
	PartThinking   PartType = "thinking"
	PartImage      PartType = "image"
	PartToolUse    PartType = "tool_use"
	PartToolResult PartType = "tool_result"
)

// Part is one piece of a message. Which fields are meaningful depends on Type:
//
//	text:        Text
//	thinking:    Text, Signature (opaque provider token that must be echoed back)
//	image:       MimeType, Data
//	tool_use:    ToolUseID, ToolName, Input
//	tool_result: ToolUseID, Text (the result for the model), Images, IsError
type Part struct {
	Type      PartType        `json:"type"`
	Text      string          `json:"text,omitempty"`
	Signature string          `json:"signature,omitempty"`
	MimeType  string          `json:"mimeType,omitempty"`
	Data      []byte          `json:"data,omitempty"`
	ToolUseID string          `json:"toolUseId,omitempty"`
	ToolName  string          `json:"toolName,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Images    []Part          `json:"images,omitempty"`
	IsError   bool            `json:"isError,omitempty"`
}

// Text returns a text part.
func Text(s string) Part { return Part{Type: PartText, Text: s} }

// Message is one turn of the conversation as the model sees it.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Request is one model call.
type Request struct {
	Model     string // provider-specific model id, without the provider prefix
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	// ThinkingBudget asks for extended thinking/reasoning with this many
	// tokens when > 0; providers map it to their own control.
	ThinkingBudget int
	// ContextWindow is the context tier the user chose (0: the model's
	// default); a provider that needs a request option for a larger
	// window (Anthropic's 1M beta) adds it.
	ContextWindow int64
}

// EventType discriminates Event.
type EventType int

const (
	EventTextDelta     EventType = iota + 1 // Index, Text
	EventThinkingDelta                      // Index, Text
	EventSignature                          // Index, Text: thinking signature
	EventToolUseStart                       // Index, ToolUseID, ToolName
	EventToolUseDelta                       // Index, Text: a piece of the JSON input
	EventToolUseEnd                         // Index, ToolUseID, ToolName, Input (complete)
	EventUsage                              // Usage (cumulative for this response)
	EventStop                               // StopReason; always the last event of a successful stream
)

// StopReason is why the model stopped.
type StopReason string

const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
)

// Usage counts tokens of one response.
type Usage struct {
	InputTokens      int64 `json:"inputTokens,omitempty"`
	OutputTokens     int64 `json:"outputTokens,omitempty"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
}

// Event is one streamed model event. Index identifies the content block the
// delta belongs to (blocks of one response have distinct indexes).
type Event struct {
	Type       EventType
	Index      int
	Text       string
	ToolUseID  string
	ToolName   string
	Input      json.RawMessage
	Usage      Usage
	StopReason StopReason
}

// ModelInfo is what corvid knows about a model (from the catalog, or defaults).
type ModelInfo struct {
	ID            string // provider:model
	ContextWindow int64
	MaxOutput     int
	Images        bool
	Reasoning     bool
}

// Model is a configured model of one provider.
type Model interface {
	Info() ModelInfo
	// Stream runs one request. The sequence yields events until an EventStop,
	// or yields a non-nil error once and ends. It must stop promptly when ctx
	// is cancelled (yielding ctx.Err()).
	Stream(ctx context.Context, req Request) iter.Seq2[Event, error]
}

// ProviderConfig is everything a provider needs to build a Model. Providers
// never read the environment themselves: config resolves these.
type ProviderConfig struct {
	Provider string // e.g. "anthropic"
	Model    string // model id without provider prefix
	APIKey   string
	BaseURL  string
	// Info is what the catalog knows of the model (filled by the caller).
	Info ModelInfo
	// IdleTimeout ends an attempt whose stream sends nothing for this long
	// (0 = the provider's default).
	IdleTimeout time.Duration
	// Headers are sent with every request, after the provider's own (so
	// they may replace them): [providers.NAME.headers] in config.toml, for
	// a proxy or gateway in front of the provider.
	Headers map[string]string
}

// SetHeaders sets cfg's extra Headers on h (an http.Header).
func (cfg ProviderConfig) SetHeaders(h interface{ Set(key, value string) }) {
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
}

// Error is a provider failure that is safe to show a user: Message is one
// sentence they can act on.
type Error struct {
	Provider  string
	Status    int  // HTTP status, if any
	Retryable bool // 429, 5xx, overloaded
	Message   string
}

func (e *Error) Error() string { return e.Message }

// UserError is what the user sees of a provider failure (usererr.Shower).
func (e *Error) UserError() *usererr.Error { return &usererr.Error{Message: e.Message, Err: e} }
