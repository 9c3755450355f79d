package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The wire types below are exactly what corvid sends to and reads from the
// two OpenAI protocols; fields corvid does not use are left out. Request
// types marshal with omitempty where the field is optional, so a request
// carries only what corvid sets. Stream types read leniently (str, num),
// as servers that copy OpenAI's format do not always agree on a field's
// type; a value of an unexpected type reads as its zero value, or for a
// string as its raw JSON text.

// ---- Chat Completions: request ----

// chatRequest is the body of POST chat/completions.
type chatRequest struct {
	Model               string            `json:"model"`
	Messages            []chatMessage     `json:"messages"`
	Stream              bool              `json:"stream"`
	StreamOptions       chatStreamOptions `json:"stream_options"`
	MaxTokens           int64             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int64             `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string            `json:"reasoning_effort,omitempty"`
	// Reasoning is OpenRouter's unified reasoning control.
	Reasoning *effortParam `json:"reasoning,omitempty"`
	Tools     []chatTool   `json:"tools,omitempty"`
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type effortParam struct {
	Effort string `json:"effort"`
}

// chatMessage is one message of any role. Content is a string or a list
// of chatText and chatImage (user), and absent on an assistant message that only calls
// tools.
type chatMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	// ReasoningContent is DeepSeek's: an assistant message's reasoning,
	// which its thinking mode wants back with the tool calls it led to.
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

// chatText and chatImage are the elements of a user message's content
// list.
type chatText struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type chatImage struct {
	Type     string   `json:"type"` // "image_url"
	ImageURL imageURL `json:"image_url"`
}

type imageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"` // "function"
	Function chatFuncDecl `json:"function"`
}

type chatFuncDecl struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// ---- Chat Completions: stream ----

// chatChunk is one streamed chunk.
type chatChunk struct {
	Choices []chatChoice `json:"choices"`
	// Usage is raw so that its presence (not null) can be told apart.
	Usage json.RawMessage `json:"usage"`
}

type chatChoice struct {
	Index        num       `json:"index"`
	Delta        chatDelta `json:"delta"`
	FinishReason str       `json:"finish_reason"`
}

type chatDelta struct {
	// Content is a string, or (Mistral's reasoning models) a list of
	// typed parts; see contentParts.
	Content   json.RawMessage `json:"content"`
	Refusal   str             `json:"refusal"`
	ToolCalls []chatToolDelta `json:"tool_calls"`
	// The non-standard reasoning fields: reasoning_content (DeepSeek,
	// vLLM, llama.cpp, LM Studio, xAI) and reasoning (OpenRouter, Ollama,
	// Groq).
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
}

type chatToolDelta struct {
	Index    num `json:"index"`
	ID       str `json:"id"`
	Function struct {
		Name      str `json:"name"`
		Arguments str `json:"arguments"`
	} `json:"function"`
}

type chatUsage struct {
	PromptTokens        num `json:"prompt_tokens"`
	CompletionTokens    num `json:"completion_tokens"`
	TotalTokens         num `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens     num `json:"cached_tokens"`
		CacheWriteTokens num `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens num `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// ---- Responses: request ----

// respRequest is the body of POST responses.
type respRequest struct {
	Model           string         `json:"model"`
	Input           []any          `json:"input"`
	Stream          bool           `json:"stream"`
	Store           bool           `json:"store"`
	Instructions    string         `json:"instructions,omitempty"`
	MaxOutputTokens int64          `json:"max_output_tokens,omitempty"`
	Reasoning       *respReasoning `json:"reasoning,omitempty"`
	Include         []string       `json:"include,omitempty"`
	Tools           []respTool     `json:"tools,omitempty"`
}

type respReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary"`
}

type respTool struct {
	Type        string         `json:"type"` // "function"
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Strict      bool           `json:"strict"`
}

// respMessage is an EasyInputMessage: Content is a string or a list of
// inputText or inputImage.
type respMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// inputText and inputImage are the parts of a user message's content.
type inputText struct {
	Type string `json:"type"` // "input_text"
	Text string `json:"text"`
}

type inputImage struct {
	Type     string `json:"type"`   // "input_image"
	Detail   string `json:"detail"` // "auto"
	ImageURL string `json:"image_url"`
}

// respReasoningItem is a reasoning item sent back. Summary is always
// present, [] when empty: ReasoningItem.required is [id, summary, type].
type respReasoningItem struct {
	Type             string        `json:"type"` // "reasoning"
	ID               string        `json:"id"`
	Summary          []summaryText `json:"summary"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
}

type summaryText struct {
	Type string `json:"type"` // "summary_text"
	Text string `json:"text"`
}

type respFunctionCall struct {
	Type      string `json:"type"` // "function_call"
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type respFunctionOutput struct {
	Type   string `json:"type"` // "function_call_output"
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// ---- Responses: stream ----

// respEvent is any streamed event, its fields flattened: each event type
// uses a few of them.
type respEvent struct {
	Type         str          `json:"type"`
	Delta        str          `json:"delta"`
	OutputIndex  num          `json:"output_index"`
	ContentIndex num          `json:"content_index"`
	SummaryIndex num          `json:"summary_index"`
	Arguments    str          `json:"arguments"`
	Code         str          `json:"code"`
	Message      str          `json:"message"`
	Item         respItem     `json:"item"`
	Response     respResponse `json:"response"`
}

type respItem struct {
	Type   str `json:"type"`
	ID     str `json:"id"`
	CallID str `json:"call_id"`
	Name   str `json:"name"`
	// Arguments is a string on a function_call item (other item types
	// carry other shapes, read as "").
	Arguments        json.RawMessage `json:"arguments"`
	EncryptedContent str             `json:"encrypted_content"`
}

// arguments is the item's arguments when they are a JSON string.
func (it respItem) arguments() string {
	var s string
	if json.Unmarshal(it.Arguments, &s) != nil {
		return ""
	}
	return s
}

type respResponse struct {
	Usage struct {
		InputTokens        num `json:"input_tokens"`
		OutputTokens       num `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens     num `json:"cached_tokens"`
			CacheWriteTokens num `json:"cache_write_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
	IncompleteDetails struct {
		Reason str `json:"reason"`
	} `json:"incomplete_details"`
	Error struct {
		Code    str `json:"code"`
		Message str `json:"message"`
	} `json:"error"`
}

// ---- lenient scalars ----

// str reads a JSON string as itself, null as "", a number or boolean as
// its text and an object or array as its raw JSON.
type str string

func (s *str) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = str(v)
	default:
		*s = str(b)
	}
	return nil
}

// num reads a JSON number (truncated to an integer), a string holding one,
// or a boolean (1 or 0); anything else reads as 0.
type num int64

func (n *num) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var v string
		if json.Unmarshal(b, &v) != nil {
			return nil
		}
		b = []byte(v)
	}
	switch string(b) {
	case "true":
		*n = 1
		return nil
	case "false", "null":
		return nil
	}
	if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		*n = num(i)
	} else if f, err := strconv.ParseFloat(string(b), 64); err == nil {
		*n = num(int64(f))
	}
	return nil
}

// decodeEvent decodes one event's data into v, which must be an object.
// A syntax error or a value that is not an object fails; a field of an
// unexpected shape is left at its zero value.
func decodeEvent(data []byte, v any) error {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || d[0] != '{' {
		return &json.SyntaxError{}
	}
	err := json.Unmarshal(d, v)
	if _, typ := err.(*json.UnmarshalTypeError); typ {
		return nil
	}
	return err
}
