package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/tool"
)

// FinalOutput asks the agent for a final output in a shape (Leviath's
// --output-format LABEL and --output-instructions TEXT; any label).
type FinalOutput struct {
	Format       string
	Instructions string
}

// submitOutput is the submit_output tool: it keeps the turn's final output,
// which the turn sends as one more message once it ends.
type submitOutput struct {
	s  *Session
	fo FinalOutput
}

func (t submitOutput) Name() string { return "submit_output" }

func (t submitOutput) Description() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Submit the final output of this task, in the %q format. Call it once, when the work is done, with the complete answer in that format; the user is shown it apart from your other messages, as the conclusion. A later call replaces an earlier one.", t.fo.Format)
	if t.fo.Instructions != "" {
		fmt.Fprintf(&b, "\n\nAbout the format: %s", t.fo.Instructions)
	}
	return b.String()
}

func (t submitOutput) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"output":{"type":"string","description":"The complete final output, in the requested format"}},"required":["output"]}`)
}

func (t submitOutput) Describe(*tool.Env, json.RawMessage) tool.Preview {
	return tool.Preview{Kind: tool.KindOther, Title: "Submit the final output (" + t.fo.Format + ")", Access: tool.AccessNone}
}

func (t submitOutput) Run(_ context.Context, _ *tool.Env, call tool.Call) (tool.Result, error) {
	var in struct {
		Output *string `json:"output"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil || in.Output == nil {
		return tool.ErrorResult(`submit_output needs {"output": "..."}: the complete final output as a string`), nil
	}
	t.s.runner.submit(in.Output)
	msg := fmt.Sprintf("Recorded as the final output (%s); it is shown to the user when this turn ends.", t.fo.Format)
	return tool.Result{Output: msg, Content: []tool.Content{{Type: tool.ContentText, Text: msg}}}, nil
}

// emitFinalOutput sends the submitted final output, if any, as one more
// message of its own, marked with Tags.FinalOutput. A front end splits long
// text across chunks of that message.
func (t *Turn) emitFinalOutput() {
	s := t.s
	out := s.runner.takeFinalOutput()
	fo := s.agent.cfg.FinalOutput
	if out == nil || fo == nil {
		return
	}
	s.conv.emit(Event{Kind: EventMessageChunk, MessageID: NewID("msg"), Content: &Block{Type: BlockText, Text: *out},
		Tags: Tags{FinalOutput: &FinalOutputTag{Format: fo.Format}}})
}
