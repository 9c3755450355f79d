package agent

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/corvid-agent/corvid/internal/codemode"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/tool"
)

// scriptToolName is the one tool a codeMode "all" session offers the model.
const scriptToolName = "run_script"

//go:embed codemode_script.md
var scriptToolDescription string

var scriptToolSchema = json.RawMessage(`{"type":"object","properties":{"script":{"type":"string","description":"The Starlark program to run."}},"required":["script"],"additionalProperties":false}`)

// offeredTools are the tool specs of the next model request: the session's
// tools, or in codeMode "all" the script tool alone, whose description
// lists the others as functions.
func (s *Session) offeredTools(reg *tool.Registry, plan bool) []llm.ToolSpec {
	specs := offered(reg.Specs(), plan)
	if s.CodeMode() != CodeModeAll {
		return specs
	}
	var b strings.Builder
	b.WriteString(scriptToolDescription)
	for _, sp := range specs {
		params, optional := schemaParams(sp.InputSchema)
		sig := strings.Join(params, ", ")
		for _, o := range optional {
			if sig != "" {
				sig += ", "
			}
			sig += o + "=None"
		}
		fmt.Fprintf(&b, "\n- `%s(%s)`: %s", scriptName(sp.Name), sig, firstSentence(sp.Description))
	}
	return []llm.ToolSpec{{Name: scriptToolName, Description: b.String(), InputSchema: scriptToolSchema}}
}

// runScript runs a run_script call: its own tool call, under which each
// tool the script calls appears as a nested tool call that passes the
// permission gate like any other.
func (t *Turn) runScript(c llm.Part) llm.Part {
	s := t.s
	id := s.conv.toolCallID(c.ToolUseID)
	var in struct {
		Script string `json:"script"`
	}
	_ = json.Unmarshal(c.Input, &in)
	s.conv.emit(Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: id, Name: scriptToolName, Title: "Run script", Kind: tool.KindOther,
		Status: ToolPending, RawInput: c.Input, Content: []tool.Content{textContent("```python\n" + in.Script + "\n```")}}})
	finish := func(text string, isErr bool, steps uint64) llm.Part {
		status := ToolCompleted
		if isErr {
			status = ToolFailed
		}
		upd := &ToolCall{ID: id, Status: status, Content: []tool.Content{textContent(text)}}
		if raw, err := json.Marshal(map[string]any{"output": text, "isError": isErr, "steps": steps}); err == nil && len(text) <= 64<<10 {
			upd.RawOutput = raw
		}
		s.conv.emit(Event{Kind: EventToolCallState, ToolCall: upd})
		return llm.Part{Type: llm.PartToolResult, ToolUseID: c.ToolUseID, Text: text, IsError: isErr}
	}
	if strings.TrimSpace(in.Script) == "" {
		return finish("run_script needs a non-empty script", true, 0)
	}
	s.conv.emit(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: id, Status: ToolInProgress}})

	reg := s.toolbox.view().tools
	var funcs []codemode.Func
	for _, sp := range reg.Specs() {
		name := sp.Name
		params, _ := schemaParams(sp.InputSchema)
		funcs = append(funcs, codemode.Func{Name: scriptName(name), Params: params, Call: func(ctx context.Context, args map[string]any) (string, error) {
			input, err := json.Marshal(args)
			if err != nil {
				return "", err
			}
			call := &Turn{s: s, ctx: ctx} // the script's context: its time limit stops the tool too
			r := call.runToolIn(llm.Part{Type: llm.PartToolUse, ToolName: name, Input: input}, id)
			if r.IsError {
				return "", errors.New(r.Text)
			}
			return r.Text, nil
		}})
	}
	res, err := codemode.Run(t.ctx, in.Script, funcs, s.agent.cfg.CodeModeLimits)
	out := s.agent.redact.text(res.Output)
	if err == nil {
		if out == "" {
			out = "(the script printed nothing and returned None)"
		}
		return finish(out, false, res.Steps)
	}
	msg := err.Error()
	if errors.Is(err, codemode.ErrCancelled) {
		msg = "cancelled by the user"
	}
	if out != "" {
		msg = out + "\n\n" + msg
	}
	return finish(s.agent.redact.text(msg), true, res.Steps)
}

// refuseDirectCall answers a call of a tool other than the script in
// codeMode "all", where the model is offered the script tool alone.
func (t *Turn) refuseDirectCall(c llm.Part) llm.Part {
	msg := fmt.Sprintf("%s was not run: this session's codeMode is all, so tools are called as functions inside %s", c.ToolName, scriptToolName)
	t.s.conv.emit(Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: t.s.conv.toolCallID(c.ToolUseID), Name: c.ToolName, Title: c.ToolName,
		Kind: tool.KindOther, Status: ToolFailed, RawInput: c.Input, Content: []tool.Content{textContent(msg)}}})
	return llm.Part{Type: llm.PartToolResult, ToolUseID: c.ToolUseID, Text: msg, IsError: true}
}

// stoppedWhy says why a tool call's context ended: a limit of the script
// it ran in, or the user's cancel.
func stoppedWhy(ctx context.Context) string {
	if le, ok := codemode.Cause(ctx); ok {
		return le.Error()
	}
	return "cancelled by the user"
}

// scriptName is a tool's name as a Starlark identifier (MCP tool names
// may hold other characters).
func scriptName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}

// schemaParams reads an object schema's required properties (in the
// schema's order, the positional parameters) and its optional ones.
func schemaParams(schema json.RawMessage) (required, optional []string) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil, nil
	}
	names := objectKeys(s.Properties)
	isReq := map[string]bool{}
	for _, r := range s.Required {
		isReq[r] = true
	}
	for _, n := range names {
		if isReq[n] {
			required = append(required, n)
		} else {
			optional = append(optional, n)
		}
	}
	return required, optional
}

// objectKeys lists a JSON object's keys in their order.
func objectKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		k, _ := tok.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	if keys == nil {
		// An unordered fallback keeps the function usable.
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	return keys
}

// firstSentence is the start of a tool's description, for the function list.
func firstSentence(d string) string {
	d = strings.TrimSpace(d)
	if i := strings.IndexAny(d, "\n"); i >= 0 {
		d = d[:i]
	}
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	return shorten(d, 200)
}
