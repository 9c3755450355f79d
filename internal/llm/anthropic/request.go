package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

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

// params turns req into Messages API parameters.
func (m *model) params(req llm.Request) (anthropic.MessageNewParams, error) {
	modelID := req.Model
	if modelID == "" {
		modelID = m.cfg.Model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.info.MaxOutput
	}
	p := anthropic.MessageNewParams{Model: modelID}
	switch {
	case req.ThinkingBudget > 0 && adaptive(modelID):
		// Claude 4.6 and later: the model decides how much to think, at
		// an effort; budget_tokens is deprecated there (removed from 4.7).
		p.Thinking = anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{}}
		p.OutputConfig = anthropic.OutputConfigParam{Effort: anthropic.OutputConfigEffort(effort(modelID, req.ThinkingBudget))}
	case req.ThinkingBudget > 0:
		budget := max(req.ThinkingBudget, minThinkingBudget)
		if maxTokens <= budget {
			maxTokens = budget + answerReserve
		}
		p.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(budget))
	}
	p.MaxTokens = int64(maxTokens)
	// Prompt caching: breakpoints after the system prompt, after the
	// tools and at the end of the conversation (3 of the 4 allowed), so
	// each turn reads the prefix the previous one wrote.
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tool)
	}
	if n := len(p.Tools); n > 0 && p.Tools[n-1].OfTool != nil {
		p.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	for _, msg := range req.Messages {
		blocks := contentBlocks(msg.Parts)
		if len(blocks) == 0 {
			continue // the API rejects a message without content
		}
		switch msg.Role {
		case llm.RoleAssistant:
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		case llm.RoleUser:
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		default:
			return p, fmt.Errorf("anthropic: message role %q is neither user nor assistant", msg.Role)
		}
	}
	if n := len(p.Messages); n > 0 {
		switch last := p.Messages[n-1]; {
		case last.OfUser != nil:
			markCache(last.OfUser.Content)
		case last.OfAssistant != nil:
			markCache(last.OfAssistant.Content)
		}
	}
	return p, nil
}

// markCache puts a cache breakpoint on the last block of blocks that can
// carry one (thinking blocks cannot).
func markCache(blocks []anthropic.ContentBlockParamUnion) {
	cc := anthropic.NewCacheControlEphemeralParam()
	for i := len(blocks) - 1; i >= 0; i-- {
		b := &blocks[i]
		switch {
		case b.OfText != nil:
			b.OfText.CacheControl = cc
		case b.OfToolResult != nil:
			b.OfToolResult.CacheControl = cc
		case b.OfToolUse != nil:
			b.OfToolUse.CacheControl = cc
		case b.OfImage != nil:
			b.OfImage.CacheControl = cc
		default:
			continue
		}
		return
	}
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

// toolParam describes t to the API. The input schema is sent exactly as
// given (it must be a JSON object schema).
func toolParam(t llm.ToolSpec) (anthropic.ToolUnionParam, error) {
	tool := anthropic.ToolParam{Name: t.Name}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`) // the API requires one
	}
	if !json.Valid(schema) {
		return anthropic.ToolUnionParam{}, fmt.Errorf("anthropic: tool %s: input schema is not valid JSON", t.Name)
	}
	tool.InputSchema = param.Override[anthropic.ToolInputSchemaParam](schema)
	return anthropic.ToolUnionParam{OfTool: &tool}, nil
}

// contentBlocks converts parts, leaving out those the API would refuse: an
// empty text, and a thinking part without signature (one that was cut off
// mid-stream or came from another provider), which cannot be verified.
func contentBlocks(parts []llm.Part) []anthropic.ContentBlockParamUnion {
	var blocks []anthropic.ContentBlockParamUnion
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(p.Text))
			}
		case llm.PartThinking:
			switch {
			case p.Text == "" && strings.HasPrefix(p.Signature, redactedPrefix):
				blocks = append(blocks, anthropic.NewRedactedThinkingBlock(strings.TrimPrefix(p.Signature, redactedPrefix)))
			case p.Signature != "":
				blocks = append(blocks, anthropic.NewThinkingBlock(p.Signature, p.Text))
			}
		case llm.PartImage:
			blocks = append(blocks, sdkImageBlock(p))
		case llm.PartToolUse:
			blocks = append(blocks, anthropic.NewToolUseBlock(p.ToolUseID, toolInput(p.Input), p.ToolName))
		case llm.PartToolResult:
			blocks = append(blocks, sdkToolResultBlock(p))
		}
	}
	return blocks
}

func sdkImageBlock(p llm.Part) anthropic.ContentBlockParamUnion {
	return anthropic.NewImageBlockBase64(p.MimeType, base64.StdEncoding.EncodeToString(p.Data))
}

// toolInput is a tool call's input as the API wants it: a JSON object,
// {} when there was none or it did not parse.
func toolInput(in json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(in))) == 0 || !json.Valid(in) {
		return json.RawMessage("{}")
	}
	return in
}

func sdkToolResultBlock(p llm.Part) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: p.ToolUseID}
	if p.IsError {
		r.IsError = anthropic.Bool(true)
	}
	if p.Text != "" {
		r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{
			OfText: &anthropic.TextBlockParam{Text: p.Text},
		})
	}
	for _, img := range p.Images {
		r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{
			OfImage: sdkImageBlock(img).OfImage,
		})
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
}
