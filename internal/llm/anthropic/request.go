package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
)

// redactedPrefix marks a thinking part's Signature as the data of a
// redacted_thinking block. A colon is outside the base64 alphabet real
// signatures use, so no real signature starts with it.
const redactedPrefix = "redacted_thinking:"

const (
	// minThinkingBudget is the smallest budget_tokens the API accepts.
	minThinkingBudget = 1024
	// answerReserve is added to max_tokens when the caller's limit would
	// leave no room for an answer after the thinking budget.
	answerReserve = 4096
)

// body turns req into the Messages API request body.
func (m *model) body(req llm.Request) (*messagesRequest, error) {
	modelID := req.Model
	if modelID == "" {
		modelID = m.cfg.Model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.info.MaxOutput
	}
	b := &messagesRequest{Model: modelID, Stream: true}
	switch {
	case req.ThinkingBudget > 0 && adaptive(modelID):
		// Claude 4.6 and later: the model decides how much to think, at
		// an effort; budget_tokens is deprecated there (removed from 4.7).
		b.Thinking = &thinking{Type: "adaptive"}
		b.OutputConfig = &outputConfig{Effort: effort(modelID, req.ThinkingBudget)}
	case req.ThinkingBudget > 0:
		budget := max(req.ThinkingBudget, minThinkingBudget)
		if maxTokens <= budget {
			maxTokens = budget + answerReserve
		}
		b.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
	}
	b.MaxTokens = maxTokens
	// Prompt caching: breakpoints after the system prompt, after the
	// tools and at the end of the conversation (3 of the 4 allowed), so
	// each turn reads the prefix the previous one wrote.
	if req.System != "" {
		b.System = []textBlock{{Type: "text", Text: req.System, CacheControl: ephemeral()}}
	}
	for _, t := range req.Tools {
		tl, err := wireTool(t)
		if err != nil {
			return nil, err
		}
		b.Tools = append(b.Tools, tl)
	}
	if n := len(b.Tools); n > 0 {
		b.Tools[n-1].CacheControl = ephemeral()
	}
	for _, msg := range req.Messages {
		blocks := wireBlocks(msg.Parts)
		if len(blocks) == 0 {
			continue // the API rejects a message without content
		}
		switch msg.Role {
		case llm.RoleAssistant, llm.RoleUser:
			b.Messages = append(b.Messages, message{Role: string(msg.Role), Content: blocks})
		default:
			return nil, fmt.Errorf("anthropic: message role %q is neither user nor assistant", msg.Role)
		}
	}
	if n := len(b.Messages); n > 0 {
		markBreakpoint(b.Messages[n-1].Content)
	}
	return b, nil
}

// markBreakpoint puts a cache breakpoint on the last block of blocks that
// can carry one (thinking blocks cannot).
func markBreakpoint(blocks []block) {
	for i := len(blocks) - 1; i >= 0; i-- {
		if cc := blocks[i].cacheControl(); cc != nil {
			*cc = ephemeral()
			return
		}
	}
}

// wireTool describes t to the API. The input schema is sent exactly as
// given (it must be a JSON object schema).
func wireTool(t llm.ToolSpec) (tool, error) {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`) // the API requires one
	}
	if !json.Valid(schema) {
		return tool{}, fmt.Errorf("anthropic: tool %s: input schema is not valid JSON", t.Name)
	}
	return tool{Name: t.Name, Description: t.Description, InputSchema: schema}, nil
}

// wireBlocks converts parts, leaving out those the API would refuse: an
// empty text, and a thinking part without signature (one that was cut off
// mid-stream or came from another provider), which cannot be verified.
func wireBlocks(parts []llm.Part) []block {
	var blocks []block
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				blocks = append(blocks, block{Text: &textBlock{Type: "text", Text: p.Text}})
			}
		case llm.PartThinking:
			switch {
			case p.Text == "" && strings.HasPrefix(p.Signature, redactedPrefix):
				blocks = append(blocks, block{RedactedThinking: &redactedThinkingBlock{Type: "redacted_thinking",
					Data: strings.TrimPrefix(p.Signature, redactedPrefix)}})
			case p.Signature != "":
				blocks = append(blocks, block{Thinking: &thinkingBlock{Type: "thinking", Thinking: p.Text, Signature: p.Signature}})
			}
		case llm.PartImage:
			blocks = append(blocks, block{Image: wireImage(p)})
		case llm.PartToolUse:
			blocks = append(blocks, block{ToolUse: &toolUseBlock{Type: "tool_use", ID: p.ToolUseID, Name: p.ToolName, Input: toolInput(p.Input)}})
		case llm.PartToolResult:
			blocks = append(blocks, block{ToolResult: wireToolResult(p)})
		}
	}
	return blocks
}

func wireImage(p llm.Part) *imageBlock {
	return &imageBlock{Type: "image", Source: imageSource{Type: "base64", MediaType: p.MimeType,
		Data: base64.StdEncoding.EncodeToString(p.Data)}}
}

func wireToolResult(p llm.Part) *toolResultBlock {
	r := &toolResultBlock{Type: "tool_result", ToolUseID: p.ToolUseID, IsError: p.IsError}
	if p.Text != "" {
		r.Content = append(r.Content, block{Text: &textBlock{Type: "text", Text: p.Text}})
	}
	for _, img := range p.Images {
		r.Content = append(r.Content, block{Image: wireImage(img)})
	}
	return r
}

// version is a Claude model id's version: "claude-opus-4-6" → [4 6],
// "claude-sonnet-4-5-20250929" → [4 5], "claude-3-7-sonnet-latest" → [3 7].
func version(model string) []int {
	var v []int
	for _, seg := range strings.Split(model, "-") {
		if len(seg) >= 8 { // a date
			continue
		}
		if n, err := strconv.Atoi(seg); err == nil {
			v = append(v, n)
		}
	}
	return v
}

// adaptive reports a model that takes thinking {type: adaptive}: Claude 4.6
// and later.
func adaptive(model string) bool {
	return slices.Compare(version(model), []int{4, 6}) >= 0
}

// effort maps corvid's thinking budget (its thought levels are 2048, 8192,
// 16384 and 32000 tokens) onto the effort levels; max exists on Opus only.
func effort(model string, budget int) string {
	switch {
	case budget <= 2048:
		return "low"
	case budget <= 8192:
		return "medium"
	case budget <= 16384 || !strings.Contains(model, "opus"):
		return "high"
	}
	return "max"
}

// toolInput is a tool call's input as the API wants it: a JSON object,
// {} when there was none or it did not parse.
func toolInput(in json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(in))) == 0 || !json.Valid(in) {
		return json.RawMessage("{}")
	}
	return in
}
