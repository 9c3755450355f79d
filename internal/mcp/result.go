package mcp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/tool"
)

// maxOutput bounds the text of one result, for the model and for the user.
const maxOutput = 100 << 10

// toResult turns a CallToolResult into what the model reads (Output,
// Images) and what the user sees (Content). Text stays text; images are
// images; embedded resources, links and audio become text; structured
// content becomes JSON text only when the server sent no content blocks
// (the spec asks servers to send both, and the model needs it only once),
// with binary payloads left out.
func toResult(r *callToolResult, images bool) tool.Result {
	var res tool.Result
	var out strings.Builder
	add := func(model, user string) {
		if out.Len() > 0 {
			out.WriteString("\n")
		}
		out.WriteString(model)
		res.Content = append(res.Content, tool.Content{Type: tool.ContentText, Text: clip(user)})
	}
	for _, c := range r.Content {
		text, img := describeContent(c)
		if img != nil {
			res.Images = append(res.Images, llm.Part{Type: llm.PartImage, MimeType: img.MimeType, Data: img.Data})
			res.Content = append(res.Content, *img)
			note := fmt.Sprintf("[image: %s, %d bytes]", img.MimeType, len(img.Data))
			if !images {
				note = fmt.Sprintf("[image: %s, %d bytes, not shown: this model does not accept images]", img.MimeType, len(img.Data))
			}
			if out.Len() > 0 {
				out.WriteString("\n")
			}
			out.WriteString(note)
			continue
		}
		add(text, text)
	}
	// Structured content is added only when the server sent no content
	// blocks: beside them it repeats what they say (an image's bytes
	// again, as base64). Binary-looking strings in it are never shown.
	if r.StructuredContent != nil && len(r.Content) == 0 {
		if b, err := json.MarshalIndent(hideBinary(r.StructuredContent), "", "  "); err == nil {
			add(string(b), "```json\n"+string(b)+"\n```")
		}
	}
	res.Output = clip(out.String())
	res.IsError = r.IsError
	if res.Output == "" {
		res.Output = "(the tool returned no content)"
		if r.IsError {
			res.Output = "the tool failed without saying why"
		}
		res.Content = append(res.Content, tool.Content{Type: tool.ContentText, Text: res.Output})
	}
	return res
}

// minBinary is the length from which a base64-looking string in
// structured content counts as a binary payload.
const minBinary = 256

// hideBinary returns v (decoded JSON) with every long base64-looking
// string replaced by a short note.
func hideBinary(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var x any
	if json.Unmarshal(b, &x) != nil {
		return v
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		case string:
			if looksBinary(v) {
				return fmt.Sprintf("[binary data, %d base64 characters, not shown]", len(v))
			}
		}
		return v
	}
	return walk(x)
}

func looksBinary(s string) bool {
	s = strings.TrimPrefix(s, "data:")
	if i := strings.Index(s, ";base64,"); i >= 0 && i < 100 {
		s = s[i+len(";base64,"):]
	}
	if len(s) < minBinary {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_' || c == '\n' || c == '\r') {
			return false
		}
	}
	return true
}

// hasLinks reports whether r has resource_link content.
func hasLinks(r *callToolResult) bool {
	for _, c := range r.Content {
		if c != nil && c.Type == "resource_link" {
			return true
		}
	}
	return false
}

// describeContent renders one content block as text, or as an image.
func describeContent(c *content) (string, *tool.Content) {
	if c == nil {
		return "", nil
	}
	switch c.Type {
	case "text":
		return c.Text, nil
	case "image":
		return "", &tool.Content{Type: tool.ContentImage, MimeType: c.MIMEType, Data: c.Data}
	case "audio":
		return fmt.Sprintf("[audio: %s, %d bytes, not shown]", c.MIMEType, len(c.Data)), nil
	case "resource":
		r := c.Resource
		switch {
		case r == nil:
			return "[empty resource]", nil
		case r.Text != "":
			return fmt.Sprintf("Resource %s:\n%s", r.URI, r.Text), nil
		case strings.HasPrefix(r.MIMEType, "image/") && len(r.Blob) > 0:
			return "", &tool.Content{Type: tool.ContentImage, MimeType: r.MIMEType, Data: r.Blob}
		default:
			return fmt.Sprintf("[resource %s: %s, %d bytes of binary data, not shown]", r.URI, cmp.Or(r.MIMEType, "unknown type"), len(r.Blob)), nil
		}
	case "resource_link":
		s := fmt.Sprintf("Resource link: %s <%s>", cmp.Or(c.Title, c.Name, c.URI), c.URI)
		if c.Description != "" {
			s += ": " + c.Description
		}
		return s, nil
	default:
		return fmt.Sprintf("[content of type %q, not shown]", c.Type), nil
	}
}

// clip keeps s under maxOutput bytes, at a rune boundary, saying so.
func clip(s string) string {
	if len(s) <= maxOutput {
		return s
	}
	cut := maxOutput
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (output truncated: %d bytes in all)", len(s))
}

// flattenPrompt renders a prompt's messages as one text for the model.
// Messages from one role are joined as they are; a conversation with
// several roles labels each message with its role.
func flattenPrompt(r *getPromptResult) string {
	roles := map[string]bool{}
	var parts []string
	var msgs []*promptMessage
	for _, m := range r.Messages {
		if m == nil {
			continue
		}
		roles[m.Role] = true
		msgs = append(msgs, m)
	}
	for _, m := range msgs {
		text, img := describeContent(m.Content)
		if img != nil {
			text = fmt.Sprintf("[image: %s, %d bytes]", img.MimeType, len(img.Data))
		}
		if len(roles) > 1 {
			text = string(m.Role) + ": " + text
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n\n")
}
