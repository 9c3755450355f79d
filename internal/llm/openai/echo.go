package openai

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
)

// echoRule says which assistant messages get their reasoning back as
// reasoning_content, for a preset whose API documents the field in
// requests. A message's reasoning goes back only where the message has
// some.
type echoRule int

const (
	echoNone echoRule = iota
	// echoLoopCalls: messages with tool calls in the current tool loop
	// (after the last user message that is not only tool results).
	echoLoopCalls
	// echoAllCalls: messages with tool calls, in every turn.
	echoAllCalls
	// echoCallTurns: every message of a turn (the messages between two
	// prompts) in which the model called tools, in every turn.
	echoCallTurns
	// echoAll: every assistant message, in every turn.
	echoAll
)

// place is where a message stands in the history: in the current tool loop
// or not, in a turn with tool calls or not.
type place struct{ inLoop, turnCalled bool }

// echoes says whether msg's reasoning goes back from where it stands;
// oneChannel: the model's chat template takes a tool-call message's
// analysis as content or as reasoning, but not both.
func (r echoRule) echoes(msg llm.Message, at place, oneChannel bool) bool {
	calls := slices.ContainsFunc(msg.Parts, isToolUse)
	text := slices.ContainsFunc(msg.Parts, func(p llm.Part) bool { return p.Type == llm.PartText && p.Text != "" })
	if calls && text && oneChannel {
		return false
	}
	switch r {
	case echoLoopCalls:
		return calls && at.inLoop
	case echoAllCalls:
		return calls
	case echoCallTurns:
		return at.turnCalled
	case echoAll:
		return true
	}
	return false
}

func isToolUse(p llm.Part) bool { return p.Type == llm.PartToolUse }

// isPrompt says msg is a user message that carries more than tool results.
func isPrompt(msg llm.Message) bool {
	return msg.Role != llm.RoleAssistant && slices.ContainsFunc(msg.Parts, func(p llm.Part) bool { return p.Type != llm.PartToolResult })
}

// places returns where each message stands: the current tool loop is what
// follows the last prompt; a turn is a prompt and what follows it up to
// the next prompt.
func places(msgs []llm.Message) []place {
	out := make([]place, len(msgs))
	loop := currentLoop(msgs)
	start := 0
	for i := 0; i <= len(msgs); i++ {
		if i < len(msgs) && (i == 0 || !isPrompt(msgs[i])) {
			continue
		}
		called := slices.ContainsFunc(msgs[start:i], func(m llm.Message) bool { return slices.ContainsFunc(m.Parts, isToolUse) })
		for j := start; j < i; j++ {
			out[j] = place{inLoop: j >= loop, turnCalled: called}
		}
		start = i
	}
	return out
}

// echoReasoning is each preset's documented rule for sending an assistant
// message's reasoning back as reasoning_content (docs/providers.md,
// "Reasoning sent back"):
//
//   - DeepSeek (thinking mode): between two user messages in which the
//     model called tools, the assistant messages' reasoning goes back in
//     all later requests, later turns included; without it the request is
//     refused (400). Reasoning of a turn without tool calls is ignored, so
//     it is not sent.
//   - Z.AI Coding Plan: "preserved thinking" is on by default on that
//     endpoint: the reasoning of previous assistant turns is kept in the
//     context and must come back complete and unmodified, every message.
//   - Z.AI (standard endpoint): "interleaved thinking": the reasoning goes
//     back with the tool results within the tool loop; the endpoint clears
//     earlier turns' reasoning (clear_thinking defaults to true), so it is
//     not sent across turns.
//   - Moonshot and Kimi for Coding (Kimi's thinking models): the
//     reasoning_content of assistant messages with tool calls is kept in the
//     context; with thinking on, a history whose tool-call message lacks it
//     is refused ("thinking is enabled but reasoning_content is missing in
//     assistant tool call message"), later turns included.
//   - llama.cpp: its server renders an assistant message's
//     reasoning_content through the model's chat template; gpt-oss's
//     (OpenAI's harmony format) keeps the reasoning of tool calls until the
//     final answer and drops it after, so it goes back within the tool loop
//     only. gpt-oss's template refuses a tool-call message that has both
//     content and reasoning ("Cannot pass both content and thinking in an
//     assistant message with tool calls"): such a message keeps its content
//     and goes back without reasoning (oneChannel).
//
// No other preset documents the field in requests: OpenRouter (which has
// reasoning_details, echoDetails), Groq, Mistral, xAI, Together, Fireworks,
// Cerebras, Xiaomi and the other local servers are sent none.
var echoReasoning = map[string]echoRule{
	"deepseek":        echoCallTurns,
	"moonshotai":      echoAllCalls,
	"kimi-for-coding": echoAllCalls,
	"zai-coding-plan": echoAll,
	"zai":             echoLoopCalls,
	"llamacpp":        echoLoopCalls,
}

// currentLoop returns the index of the first message of the current tool
// loop: the one after the last prompt, or 0 when there is none.
func currentLoop(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if isPrompt(msgs[i]) {
			return i + 1
		}
	}
	return 0
}

// echoDetails lists the presets that stream delta.reasoning_details and
// want them back, unmodified, on the assistant message (OpenRouter:
// "Preserving reasoning blocks"; through it, Gemini 3 refuses a function
// call whose thought signature, an encrypted entry, does not come back).
var echoDetails = map[string]bool{"openrouter": true}

// detailsSig is the Signature of the thinking part that carries a
// response's reasoning_details, as chatState.end yields it.
type detailsSig struct {
	ReasoningDetails []json.RawMessage `json:"reasoning_details"`
}

// oneChannel says whether the model's chat template takes a tool-call
// message's analysis in one field only: gpt-oss served by llama.cpp.
func (m *model) oneChannel(model string) bool {
	return m.p.Name == "llamacpp" && strings.Contains(strings.ToLower(model), "gpt-oss")
}
