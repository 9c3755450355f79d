package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
)

// generatedIDPrefix marks tool-use ids corvid invented because Gemini sent
// none; they are not sent back.
const generatedIDPrefix = "gemini_call_"

// emptySchema is the parameter schema of a tool that declares none (or one
// that is not a JSON object).
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Signatures (thoughtSignature bytes) travel as standard base64 text in
// llm.EventSignature and llm.Part.Signature, as on the wire.

// request translates an llm.Request into the streamGenerateContent body.
func (m *model) request(req llm.Request) *generateRequest {
	names := map[string]string{} // tool-use id → function name, for responses
	body := &generateRequest{Contents: []content{}}
	for _, msg := range req.Messages {
		var c *content
		if msg.Role == llm.RoleAssistant {
			c = modelContent(msg, names)
		} else {
			c = userContent(msg, names)
		}
		if c != nil {
			body.Contents = append(body.Contents, *c)
		}
	}
	if req.System != "" {
		body.SystemInstruction = &content{Role: "user", Parts: []part{{Text: req.System}}}
	}
	gc := &generationConfig{}
	if req.MaxTokens > 0 {
		gc.MaxOutputTokens = req.MaxTokens
	}
	modelID := req.Model
	if modelID == "" {
		modelID = m.cfg.Model
	}
	switch level := thinkingLevel(modelID, req.ThinkingBudget); {
	case level != "":
		// Gemini 3 takes a level; thinkingBudget is the 2.5 control.
		gc.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingLevel: level}
	case req.ThinkingBudget > 0:
		budget := req.ThinkingBudget
		gc.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingBudget: &budget}
	case m.cfg.Info.Reasoning || isGemini3(modelID):
		gc.ThinkingConfig = &thinkingConfig{IncludeThoughts: true}
	}
	if *gc != (generationConfig{}) {
		body.GenerationConfig = gc
	}
	if len(req.Tools) > 0 {
		decls := make([]functionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			decls = append(decls, functionDeclaration{Name: t.Name, Description: t.Description, Parameters: jsonObject(t.InputSchema, emptySchema)})
		}
		body.Tools = []tool{{FunctionDeclarations: decls}}
	}
	return body
}

// isGemini3 reports a model of the Gemini 3 generation or later, which
// take thinkingLevel instead of thinkingBudget.
func isGemini3(model string) bool {
	model = strings.TrimPrefix(model, "models/")
	v, ok := strings.CutPrefix(model, "gemini-")
	return ok && len(v) > 0 && v[0] >= '3' && v[0] <= '9'
}

// thinkingLevel maps corvid's thinking budget onto Gemini 3's levels ("" for
// an older model, or when the model's default is meant): Pro knows low and
// high; Flash also minimal (thinking off) and medium.
func thinkingLevel(model string, budget int) string {
	if !isGemini3(model) {
		return ""
	}
	flash := strings.Contains(model, "flash")
	switch {
	case budget <= 0 && flash:
		return "minimal"
	case budget <= 0:
		return "" // Pro cannot think less than low; keep its default
	case budget <= 2048:
		return "low"
	case budget <= 8192 && flash:
		return "medium"
	}
	return "high"
}

// jsonObject returns raw compacted if it is a JSON object, else fallback.
func jsonObject(raw json.RawMessage, fallback json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil || b.Len() == 0 || b.Bytes()[0] != '{' {
		return fallback
	}
	return b.Bytes()
}

// signature returns s if it is a signature Gemini could have issued
// (standard base64), else "": a signature from another provider is not
// sent.
func signature(s string) string {
	if s == "" {
		return ""
	}
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return ""
	}
	return s
}

func modelContent(msg llm.Message, names map[string]string) *content {
	c := &content{Role: "model"}
	for _, p := range msg.Parts {
		switch p.Type {
		case llm.PartThinking:
			if p.Text == "" && p.Signature == "" {
				continue
			}
			c.Parts = append(c.Parts, part{Text: p.Text, Thought: true, ThoughtSignature: signature(p.Signature)})
		case llm.PartText:
			if p.Text == "" && p.Signature == "" {
				continue
			}
			c.Parts = append(c.Parts, part{Text: p.Text, ThoughtSignature: signature(p.Signature)})
		case llm.PartToolUse:
			names[p.ToolUseID] = p.ToolName
			fc := &functionCall{Name: p.ToolName, Args: jsonObject(p.Input, nil)}
			if !strings.HasPrefix(p.ToolUseID, generatedIDPrefix) {
				fc.ID = p.ToolUseID
			}
			c.Parts = append(c.Parts, part{FunctionCall: fc, ThoughtSignature: signature(p.Signature)})
		}
	}
	if len(c.Parts) == 0 {
		return nil
	}
	return c
}

func userContent(msg llm.Message, names map[string]string) *content {
	c := &content{Role: "user"}
	var after []part // images of tool results, after all responses
	for _, p := range msg.Parts {
		switch p.Type {
		case llm.PartText:
			c.Parts = append(c.Parts, part{Text: p.Text})
		case llm.PartImage:
			c.Parts = append(c.Parts, part{InlineData: &blob{MIMEType: p.MimeType, Data: p.Data}})
		case llm.PartToolResult:
			key := "output"
			if p.IsError {
				key = "error"
			}
			fr := &functionResponse{Name: names[p.ToolUseID], Response: map[string]any{key: p.Text}}
			if fr.Name == "" {
				fr.Name = "unknown_tool"
			}
			if !strings.HasPrefix(p.ToolUseID, generatedIDPrefix) {
				fr.ID = p.ToolUseID
			}
			c.Parts = append(c.Parts, part{FunctionResponse: fr})
			for _, img := range p.Images {
				after = append(after, part{InlineData: &blob{MIMEType: img.MimeType, Data: img.Data}})
			}
		}
	}
	c.Parts = append(c.Parts, after...)
	if len(c.Parts) == 0 {
		return nil
	}
	return c
}
