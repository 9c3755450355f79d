package anthropic

import (
	"encoding/json"
	"errors"
)

// The JSON shapes of the Messages API (POST /v1/messages, stream:true)
// that corvid sends and reads, by their wire names. Fields corvid does not
// send are left out; fields of the stream it does not read are ignored.
// The tests decode every request body with the official SDK's parameter
// types and read the recorded streams with its accumulator as well
// (oracle_*_test.go), so a field spelt wrong here fails there.

// messagesRequest is the body of one Messages API call.
type messagesRequest struct {
	MaxTokens    int           `json:"max_tokens"`
	Messages     []message     `json:"messages,omitempty"` // omitted when empty, as the SDK did
	Model        string        `json:"model"`
	System       []textBlock   `json:"system,omitempty"`
	Thinking     *thinking     `json:"thinking,omitempty"`
	OutputConfig *outputConfig `json:"output_config,omitempty"`
	Tools        []tool        `json:"tools,omitempty"`
	Stream       bool          `json:"stream"`
}

// message is one turn: role "user" or "assistant".
type message struct {
	Content []block `json:"content"`
	Role    string  `json:"role"`
}

// cacheControl marks a prompt-cache breakpoint after the block carrying it.
type cacheControl struct {
	Type string `json:"type"` // "ephemeral"
}

func ephemeral() *cacheControl { return &cacheControl{Type: "ephemeral"} }

// thinking is the request's thinking configuration: {type: enabled,
// budget_tokens} or {type: adaptive}.
type thinking struct {
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	Type         string `json:"type"`
}

type outputConfig struct {
	Effort string `json:"effort"` // low, medium, high, max
}

// tool declares a client tool. Its input schema goes out exactly as given.
type tool struct {
	InputSchema  json.RawMessage `json:"input_schema"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// block is one content block of a message: exactly one field is set, and
// it is encoded as the block itself.
type block struct {
	Text             *textBlock
	Thinking         *thinkingBlock
	RedactedThinking *redactedThinkingBlock
	Image            *imageBlock
	ToolUse          *toolUseBlock
	ToolResult       *toolResultBlock
}

func (b block) MarshalJSON() ([]byte, error) {
	switch {
	case b.Text != nil:
		return json.Marshal(b.Text)
	case b.Thinking != nil:
		return json.Marshal(b.Thinking)
	case b.RedactedThinking != nil:
		return json.Marshal(b.RedactedThinking)
	case b.Image != nil:
		return json.Marshal(b.Image)
	case b.ToolUse != nil:
		return json.Marshal(b.ToolUse)
	case b.ToolResult != nil:
		return json.Marshal(b.ToolResult)
	}
	return nil, errors.New("anthropic: empty content block")
}

// cacheControl returns where b's cache breakpoint goes, or nil for a block
// that cannot carry one (thinking blocks).
func (b block) cacheControl() **cacheControl {
	switch {
	case b.Text != nil:
		return &b.Text.CacheControl
	case b.ToolResult != nil:
		return &b.ToolResult.CacheControl
	case b.ToolUse != nil:
		return &b.ToolUse.CacheControl
	case b.Image != nil:
		return &b.Image.CacheControl
	}
	return nil
}

type textBlock struct {
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
	Type         string        `json:"type"` // "text"
}

// thinkingBlock goes back exactly as it was streamed: text and signature,
// both always present.
type thinkingBlock struct {
	Signature string `json:"signature"`
	Thinking  string `json:"thinking"`
	Type      string `json:"type"` // "thinking"
}

type redactedThinkingBlock struct {
	Data string `json:"data"`
	Type string `json:"type"` // "redacted_thinking"
}

type imageBlock struct {
	Source       imageSource   `json:"source"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
	Type         string        `json:"type"` // "image"
}

type imageSource struct {
	Data      string `json:"data"` // base64
	MediaType string `json:"media_type"`
	Type      string `json:"type"` // "base64"
}

type toolUseBlock struct {
	ID           string          `json:"id"`
	Input        json.RawMessage `json:"input"`
	Name         string          `json:"name"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
	Type         string          `json:"type"` // "tool_use"
}

// toolResultBlock's content holds text and image blocks only.
type toolResultBlock struct {
	ToolUseID    string        `json:"tool_use_id"`
	IsError      bool          `json:"is_error,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
	Content      []block       `json:"content,omitempty"`
	Type         string        `json:"type"` // "tool_result"
}

// streamEvent is one event of the response stream, any type: message_start,
// content_block_start, content_block_delta, content_block_stop,
// message_delta, message_stop, ping or error. Each type fills its own
// fields; the rest stay zero.
type streamEvent struct {
	Type         string       `json:"type"`
	Index        int64        `json:"index"`         // content_block_*
	Message      startMessage `json:"message"`       // message_start
	ContentBlock startBlock   `json:"content_block"` // content_block_start
	Delta        eventDelta   `json:"delta"`         // content_block_delta, message_delta
	Usage        usage        `json:"usage"`         // message_delta
	Error        apiErrorBody `json:"error"`         // error
}

type startMessage struct {
	Usage usage `json:"usage"`
}

// startBlock is a content block as content_block_start opens it: text,
// thinking, redacted_thinking, tool_use, or a server-side block corvid
// ignores.
type startBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
	ID        string `json:"id"`
	Name      string `json:"name"`
}

// eventDelta is a content_block_delta's delta (text_delta, thinking_delta,
// signature_delta, input_json_delta) or message_delta's (stop_reason).
type eventDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

// usage counts tokens; message_delta's counts are cumulative.
type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// apiErrorBody is the error of an error answer ({"type": "error", "error":
// {...}}) or of an error event.
type apiErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// decodeEvent reads one event's data into ev. Like the SDK it replaces, it
// fails on malformed JSON only: a field of an unexpected type is left at
// zero and the rest of the event is still read.
func decodeEvent(data []byte, ev *streamEvent) error {
	err := json.Unmarshal(data, ev)
	if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return nil
	}
	return err
}
