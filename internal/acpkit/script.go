package acpkit

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/corvid-agent/corvid/internal/llm/script"
)

// Script builds a scripted-model file, the JSON that `corvid acp -m script:FILE` plays
// (docs/script-format.md). The N-th model call of a session plays the N-th response; a turn
// that calls a tool makes two calls. For example, a turn that reads a file and answers:
//
//	acpkit.NewScript(
//		acpkit.Reply(acpkit.ToolCall("read", map[string]any{"path": "go.mod"})),
//		acpkit.Reply(acpkit.Thinking("It is a module."), acpkit.Text("Done.")),
//	).OnExhausted("repeat-last").WriteFile(path)
//
// The methods set file-wide fields and return the script for chaining.
type Script struct{ s script.Script }

// Response is one model call's output; build it with [Reply].
type Response struct{ r script.Response }

// Part is one content block of a response: [Text], [Thinking] or [ToolCall].
type Part = script.Part

// NewScript returns a script that plays responses in order.
func NewScript(responses ...Response) *Script {
	s := &Script{s: script.Script{Responses: []script.Response{}}}
	for _, r := range responses {
		s.s.Responses = append(s.s.Responses, r.r)
	}
	return s
}

// Stream sets, for every response, how many characters each streamed chunk carries and the
// delay in milliseconds before each chunk and tool call (0, 0: each part at once).
func (s *Script) Stream(chunkSize, delayMs int) *Script {
	s.s.ChunkSize, s.s.DelayMs = chunkSize, delayMs
	return s
}

// OnExhausted says what plays once the responses run out: "repeat-last", "cycle", or ""
// (a short text saying the script is exhausted).
func (s *Script) OnExhausted(mode string) *Script {
	s.s.OnExhausted = mode
	return s
}

// ContextWindow sets the context window the model reports (default 200000).
func (s *Script) ContextWindow(tokens int64) *Script {
	s.s.ContextWindow = tokens
	return s
}

// Images makes the model accept images (promptCapabilities.image).
func (s *Script) Images() *Script {
	s.s.Images = true
	return s
}

// JSON returns the script file's content.
func (s *Script) JSON() []byte {
	b, err := json.Marshal(s.s)
	if err != nil { // only a Part built by hand with invalid Input gets here
		panic(fmt.Sprintf("acpkit: marshal script: %v", err))
	}
	return b
}

// WriteFile writes the script to path, readable by its owner only.
func (s *Script) WriteFile(path string) error { return os.WriteFile(path, s.JSON(), 0o600) }

// Reply is a response made of parts, ending the turn unless a part is a tool call.
func Reply(parts ...Part) Response {
	return Response{r: script.Response{Parts: append([]Part{}, parts...)}}
}

// Stream overrides the script's chunk size and delay for this response.
func (r Response) Stream(chunkSize, delayMs int) Response {
	r.r.ChunkSize, r.r.DelayMs = chunkSize, delayMs
	return r
}

// Stop sets the stop reason: "end_turn", "max_tokens", "refusal" or "tool_use".
func (r Response) Stop(reason string) Response {
	r.r.StopReason = reason
	return r
}

// Fail makes the model call fail with message after afterParts parts have streamed (0: before
// any output); status is the provider's HTTP status (0 for none).
func (r Response) Fail(message string, status, afterParts int, retryable bool) Response {
	r.r.Error = &script.Error{Message: message, Status: status, AfterParts: afterParts, Retryable: retryable}
	return r
}

// Text is a text part, streamed as agent_message_chunk.
func Text(text string) Part { return Part{Type: "text", Text: text} }

// Repeat is a text part holding text n times over (large outputs in small files).
func Repeat(text string, n int) Part { return Part{Type: "text", Text: text, Repeat: n} }

// Thinking is a reasoning part, streamed as agent_thought_chunk.
func Thinking(text string) Part { return Part{Type: "thinking", Text: text} }

// ToolCall is a call of the tool name with input (any value encoding/json can marshal; it
// panics otherwise, a mistake in the test). Its id is chosen by corvid.
func ToolCall(name string, input any) Part {
	b, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("acpkit: tool call %s input: %v", name, err))
	}
	return Part{Type: "tool_call", Name: name, Input: b}
}
