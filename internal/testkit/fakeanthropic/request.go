package fakeanthropic

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Request is one request the server received, recorded before it was
// answered (including requests that were answered with a fault).
type Request struct {
	Method string
	Path   string
	Header http.Header
	Raw    json.RawMessage // the body as sent
	Body   RequestBody     // the body decoded (zero if it was not JSON)
}

// APIKey is the x-api-key header.
func (r Request) APIKey() string { return r.Header.Get("X-Api-Key") }

// SystemText is the system prompt, whether sent as a string or as text
// blocks (joined with "\n").
func (r Request) SystemText() string {
	return textOf(r.Body.System)
}

// RequestBody is the part of a Messages API request body tests look at.
// Raw has the rest.
type RequestBody struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system,omitempty"`
	Messages  []Message       `json:"messages"`
	Tools     []Tool          `json:"tools,omitempty"`
	Thinking  *ThinkingConfig `json:"thinking,omitempty"`
}

// Message is one message of a request. Content sent as a plain string is
// decoded as one text block.
type Message struct {
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// UnmarshalJSON accepts content as a string or as an array of blocks.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	var s string
	if json.Unmarshal(raw.Content, &s) == nil {
		m.Content = []ContentBlock{{Type: "text", Text: s}}
		return nil
	}
	return json.Unmarshal(raw.Content, &m.Content)
}

// ContentBlock is any content block of a request message; which fields are
// set depends on Type (text, image, thinking, redacted_thinking, tool_use,
// tool_result).
type ContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	// Content is a tool_result's content: a string or an array of blocks.
	Content json.RawMessage `json:"content,omitempty"`
	Source  *ImageSource    `json:"source,omitempty"`
}

// ResultBlocks decodes a tool_result's content as blocks (a string becomes
// one text block).
func (c ContentBlock) ResultBlocks() []ContentBlock {
	var s string
	if json.Unmarshal(c.Content, &s) == nil {
		return []ContentBlock{{Type: "text", Text: s}}
	}
	var blocks []ContentBlock
	_ = json.Unmarshal(c.Content, &blocks)
	return blocks
}

// ResultText is the text of a tool_result's content, joined with "\n".
func (c ContentBlock) ResultText() string { return textOf(c.Content) }

// ImageSource is an image block's source.
type ImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// Tool is one tool of a request.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ThinkingConfig is a request's thinking field.
type ThinkingConfig struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// textOf reads a string, or the text blocks of an array, of raw JSON.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []ContentBlock
	_ = json.Unmarshal(raw, &blocks)
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}
