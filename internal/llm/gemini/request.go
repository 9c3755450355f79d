package gemini

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"google.golang.org/genai"

	"github.com/corvid-agent/corvid/internal/llm"
)

// generatedIDPrefix marks tool-use ids corvid invented because Gemini sent
// none; they are not sent back.
const generatedIDPrefix = "gemini_call_"

// Signatures (thoughtSignature bytes) travel as base64 text in
// llm.EventSignature and llm.Part.Signature.

// request translates an llm.Request into genai contents and config.
func (m *model) request(req llm.Request) ([]*genai.Content, *genai.GenerateContentConfig) {
	names := map[string]string{} // tool-use id → function name, for responses
	var contents []*genai.Content
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleAssistant {
			if c := modelContent(msg, names); c != nil {
				contents = append(contents, c)
			}
			continue
		}
		if c := userContent(msg, names); c != nil {
			contents = append(contents, c)
		}
	}
	cfg := &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(req.MaxTokens)
	}
	if req.ThinkingBudget > 0 {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr(int32(req.ThinkingBudget))}
	} else if m.cfg.Info.Reasoning {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true}
	}
	if len(req.Tools) > 0 {
		var decls []*genai.FunctionDeclaration
		for _, t := range req.Tools {
			var schema any = map[string]any{"type": "object", "properties": map[string]any{}}
			if len(t.InputSchema) > 0 {
				var s map[string]any
				if json.Unmarshal(t.InputSchema, &s) == nil && s != nil {
					schema = s
				}
			}
			decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: schema})
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	return contents, cfg
}

func signature(s string) []byte {
	if s == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil // not ours
	}
	return b
}

func modelContent(msg llm.Message, names map[string]string) *genai.Content {
	c := &genai.Content{Role: genai.RoleModel}
	for _, p := range msg.Parts {
		switch p.Type {
		case llm.PartThinking:
			if p.Text == "" && p.Signature == "" {
				continue
			}
			c.Parts = append(c.Parts, &genai.Part{Text: p.Text, Thought: true, ThoughtSignature: signature(p.Signature)})
		case llm.PartText:
			if p.Text == "" && p.Signature == "" {
				continue
			}
			c.Parts = append(c.Parts, &genai.Part{Text: p.Text, ThoughtSignature: signature(p.Signature)})
		case llm.PartToolUse:
			names[p.ToolUseID] = p.ToolName
			var args map[string]any
			_ = json.Unmarshal(p.Input, &args)
			fc := &genai.FunctionCall{Name: p.ToolName, Args: args}
			if !strings.HasPrefix(p.ToolUseID, generatedIDPrefix) {
				fc.ID = p.ToolUseID
			}
			c.Parts = append(c.Parts, &genai.Part{FunctionCall: fc, ThoughtSignature: signature(p.Signature)})
		}
	}
	if len(c.Parts) == 0 {
		return nil
	}
	return c
}

func userContent(msg llm.Message, names map[string]string) *genai.Content {
	c := &genai.Content{Role: genai.RoleUser}
	var after []*genai.Part // images of tool results, after all responses
	for _, p := range msg.Parts {
		switch p.Type {
		case llm.PartText:
			c.Parts = append(c.Parts, &genai.Part{Text: p.Text})
		case llm.PartImage:
			c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{MIMEType: p.MimeType, Data: p.Data}})
		case llm.PartToolResult:
			key := "output"
			if p.IsError {
				key = "error"
			}
			fr := &genai.FunctionResponse{Name: names[p.ToolUseID], Response: map[string]any{key: p.Text}}
			if fr.Name == "" {
				fr.Name = "unknown_tool"
			}
			if !strings.HasPrefix(p.ToolUseID, generatedIDPrefix) {
				fr.ID = p.ToolUseID
			}
			c.Parts = append(c.Parts, &genai.Part{FunctionResponse: fr})
			for _, img := range p.Images {
				after = append(after, &genai.Part{InlineData: &genai.Blob{MIMEType: img.MimeType, Data: img.Data}})
			}
		}
	}
	c.Parts = append(c.Parts, after...)
	if len(c.Parts) == 0 {
		return nil
	}
	return c
}
