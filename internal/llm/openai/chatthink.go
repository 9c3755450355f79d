package openai

import (
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
)

// chatThinking puts the session's thought level into a Chat Completions
// request in the way each server documents, and leaves the request alone
// where a server has no such control or would refuse one (a thought level
// of off sends nothing: the model's default):
//
//   - api.openai.com, and gpt-oss on any server (Groq, Cerebras, Fireworks,
//     Together, OpenRouter excepted, and the local servers):
//     reasoning_effort low, medium or high;
//   - OpenRouter: {"reasoning": {"effort": …}}, its unified control, which
//     it translates for each upstream model (a thinking budget for Claude
//     and Gemini);
//   - Groq's Qwen 3: reasoning_effort "default" (the only value besides
//     "none" it takes);
//   - xAI's grok-3-mini: reasoning_effort low or high (the two it takes;
//     grok-4 and grok-code-fast refuse the parameter);
//   - DeepSeek (the model id chooses reasoning) and Mistral (magistral
//     always reasons) have no such parameter.
func (m *model) chatThinking(p *chatRequest, req llm.Request) {
	e := effort(req.ThinkingBudget)
	if e == "" {
		return
	}
	id := strings.ToLower(req.Model)
	switch {
	case m.p.Name == "openrouter":
		p.Reasoning = &effortParam{Effort: e}
	case m.official, strings.Contains(id, "gpt-oss"):
		p.ReasoningEffort = e
	case m.p.Name == "groq" && strings.Contains(id, "qwen3"):
		p.ReasoningEffort = "default"
	case m.p.Name == "xai" && strings.HasPrefix(id, "grok-3-mini"):
		if e == "medium" {
			e = "low"
		}
		p.ReasoningEffort = e
	}
}
