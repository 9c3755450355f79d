package acp

import (
	"encoding/json"
	"fmt"
)

// ContentBlock is a prompt block or displayable content, keyed by Type:
// text, image, audio, resource_link, resource.
type ContentBlock struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"` // base64, image/audio
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Resource    *EmbeddedResource `json:"resource,omitempty"`
	Annotations json.RawMessage   `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// EmbeddedResource is text or blob resource contents (untagged: text wins).
type EmbeddedResource struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// TextBlock returns a text content block.
func TextBlock(s string) ContentBlock { return ContentBlock{Type: "text", Text: s} }

// MarshalJSON writes exactly the fields of the block's variant, including
// required ones that are empty (a text block always has "text").
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case "text":
		return json.Marshal(struct {
			Type        string          `json:"type"`
			Text        string          `json:"text"`
			Annotations json.RawMessage `json:"annotations,omitempty"`
			Meta        Meta            `json:"_meta,omitempty"`
		}{b.Type, b.Text, b.Annotations, b.Meta})
	case "image", "audio":
		return json.Marshal(struct {
			Type        string          `json:"type"`
			Data        string          `json:"data"`
			MimeType    string          `json:"mimeType"`
			URI         string          `json:"uri,omitempty"`
			Annotations json.RawMessage `json:"annotations,omitempty"`
			Meta        Meta            `json:"_meta,omitempty"`
		}{b.Type, b.Data, b.MimeType, b.URI, b.Annotations, b.Meta})
	case "resource_link":
		return json.Marshal(struct {
			Type        string          `json:"type"`
			URI         string          `json:"uri"`
			Name        string          `json:"name"`
			MimeType    string          `json:"mimeType,omitempty"`
			Title       string          `json:"title,omitempty"`
			Description string          `json:"description,omitempty"`
			Size        *int64          `json:"size,omitempty"`
			Annotations json.RawMessage `json:"annotations,omitempty"`
			Meta        Meta            `json:"_meta,omitempty"`
		}{b.Type, b.URI, b.Name, b.MimeType, b.Title, b.Description, b.Size, b.Annotations, b.Meta})
	case "resource":
		if b.Resource == nil {
			return nil, fmt.Errorf("resource block without resource")
		}
		return json.Marshal(struct {
			Type        string            `json:"type"`
			Resource    *EmbeddedResource `json:"resource"`
			Annotations json.RawMessage   `json:"annotations,omitempty"`
			Meta        Meta              `json:"_meta,omitempty"`
		}{b.Type, b.Resource, b.Annotations, b.Meta})
	}
	return nil, fmt.Errorf("unknown content block type %q", b.Type)
}

// Validate checks an inbound block's required fields.
func (b *ContentBlock) Validate() error {
	switch b.Type {
	case "text":
	case "image", "audio":
		if b.Data == "" || b.MimeType == "" {
			return fmt.Errorf("%s block needs data and mimeType", b.Type)
		}
	case "resource_link":
		if b.URI == "" {
			return fmt.Errorf("resource_link block needs uri")
		}
	case "resource":
		if b.Resource == nil || b.Resource.URI == "" || (b.Resource.Text == nil && b.Resource.Blob == nil) {
			return fmt.Errorf("resource block needs resource.uri and resource.text or resource.blob")
		}
	case "":
		return fmt.Errorf("content block without type")
	default:
		return fmt.Errorf("unknown content block type %q", b.Type)
	}
	return nil
}

// ToolCallContent is content of a tool call, keyed by Type: content, diff,
// terminal.
type ToolCallContent struct {
	Type       string        `json:"type"`
	Content    *ContentBlock `json:"content,omitempty"`
	Path       string        `json:"path,omitempty"`
	OldText    *string       `json:"oldText,omitempty"`
	NewText    string        `json:"newText,omitempty"`
	TerminalID string        `json:"terminalId,omitempty"`
}

// MarshalJSON writes the variant's fields.
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case "content":
		return json.Marshal(struct {
			Type    string        `json:"type"`
			Content *ContentBlock `json:"content"`
		}{c.Type, c.Content})
	case "diff":
		return json.Marshal(struct {
			Type    string  `json:"type"`
			Path    string  `json:"path"`
			OldText *string `json:"oldText"`
			NewText string  `json:"newText"`
		}{c.Type, c.Path, c.OldText, c.NewText})
	case "terminal":
		return json.Marshal(struct {
			Type       string `json:"type"`
			TerminalID string `json:"terminalId"`
		}{c.Type, c.TerminalID})
	}
	return nil, fmt.Errorf("unknown tool call content type %q", c.Type)
}

// ToolCallLocation is a file position the editor can follow.
type ToolCallLocation struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// PlanEntry is one task of a plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}
