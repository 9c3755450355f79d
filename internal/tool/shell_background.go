package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

//go:embed shell_output.md
var shellOutputDescription string

//go:embed shell_kill.md
var shellKillDescription string

const maxShellWait = 60 * time.Second

type shellIDInput struct {
	ID   string `json:"id"`
	Wait int    `json:"wait,omitempty"`
}

// ShellOutput reads a background command's output.
type ShellOutput struct{}

func (ShellOutput) Name() string        { return "shell_output" }
func (ShellOutput) Description() string { return shellOutputDescription }
func (ShellOutput) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"id":{"type":"string","description":"Shell id returned by shell"},` +
		`"wait":{"type":"integer","description":"Seconds to wait for the command to exit (max 60)"}},` +
		`"required":["id"]}`)
}

func (ShellOutput) Describe(env *Env, raw json.RawMessage) Preview {
	var in shellIDInput
	looseDecode(raw, &in)
	return Preview{Kind: KindExecute, Title: "Read output of shell " + in.ID, Access: AccessNone}
}

func (ShellOutput) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in shellIDInput
	if r := decodeInput("shell_output", call.Input, &in); r != nil {
		return *r, nil
	}
	terms := env.terminals()
	if in.Wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, min(time.Duration(in.Wait)*time.Second, maxShellWait))
		_, err := terms.WaitForExit(wctx, in.ID)
		cancel()
		if errors.Is(err, ErrNoTerminal) {
			return unknownShell(in.ID), nil
		}
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
	}
	out, err := terms.Output(ctx, in.ID)
	if errors.Is(err, ErrNoTerminal) {
		return unknownShell(in.ID), nil
	} else if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return ErrorResult(fmt.Sprintf("cannot read shell %s: %v", in.ID, err)), nil
	}
	text := formatShellOutput(out)
	if out.Exit == nil {
		text += "\n[still running]"
	} else {
		text += "\n[" + out.Exit.String() + "]"
	}
	return Result{Output: text, Content: []Content{{Type: ContentText, Text: "```\n" + text + "\n```"}}}, nil
}

// ShellKill stops a background command.
type ShellKill struct{}

func (ShellKill) Name() string        { return "shell_kill" }
func (ShellKill) Description() string { return shellKillDescription }
func (ShellKill) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"id":{"type":"string","description":"Shell id returned by shell"}},"required":["id"]}`)
}

func (ShellKill) Describe(env *Env, raw json.RawMessage) Preview {
	var in shellIDInput
	looseDecode(raw, &in)
	return Preview{Kind: KindExecute, Title: "Stop shell " + in.ID, Access: AccessNone}
}

func (ShellKill) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in shellIDInput
	if r := decodeInput("shell_kill", call.Input, &in); r != nil {
		return *r, nil
	}
	terms := env.terminals()
	bg, stop := context.WithTimeout(context.WithoutCancel(ctx), killGrace)
	defer stop()
	if err := terms.Kill(bg, in.ID); errors.Is(err, ErrNoTerminal) {
		return unknownShell(in.ID), nil
	}
	status, _ := terms.WaitForExit(bg, in.ID)
	out, _ := terms.Output(bg, in.ID)
	_ = terms.Release(bg, in.ID)
	text := formatShellOutput(out) + "\n[stopped: " + status.String() + "]"
	return Result{Output: text, Content: []Content{{Type: ContentText, Text: "```\n" + text + "\n```"}}}, nil
}

func unknownShell(id string) Result {
	return ErrorResult(fmt.Sprintf("no running or finished background shell with id %q", id))
}
