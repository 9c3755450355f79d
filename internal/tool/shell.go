package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

//go:embed shell.md
var shellDescription string

const (
	defaultShellTimeout = 120 * time.Second
	maxShellTimeout     = 600 * time.Second
	// The model sees at most shellHead+shellTail bytes of output.
	shellHead = 10 << 10
	shellTail = 20 << 10
	// shellBufferLimit is what a terminal keeps of a command's output.
	shellBufferLimit = 1 << 20
	// killGrace bounds the wait for a killed command to be reaped.
	killGrace = 3 * time.Second
)

// shellEnv keeps commands from waiting on a pager or a credential prompt.
var shellEnv = []EnvVar{
	{"PAGER", "cat"}, {"GIT_PAGER", "cat"}, {"GIT_TERMINAL_PROMPT", "0"}, {"GIT_EDITOR", "true"},
}

// Shell runs a command through env.Terminals.
type Shell struct{}

type shellInput struct {
	Command    string `json:"command"`
	Timeout    int    `json:"timeout,omitempty"`
	Background bool   `json:"background,omitempty"`
}

func (Shell) Name() string        { return "shell" }
func (Shell) Description() string { return shellDescription }
func (Shell) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"command":{"type":"string","description":"Command line run with bash -c"},` +
		`"timeout":{"type":"integer","description":"Seconds before the command is killed (default 120, max 600)"},` +
		`"background":{"type":"boolean","description":"Run in the background and return a shell id"}},` +
		`"required":["command"]}`)
}

func (Shell) Describe(env *Env, raw json.RawMessage) Preview {
	var in shellInput
	looseDecode(raw, &in)
	title := "Run " + commandTitle(in.Command)
	if in.Background {
		title += " in the background"
	}
	if env.Sandbox.On() {
		title += " (" + env.Sandbox.Label() + ")"
	}
	return Preview{Kind: KindExecute, Title: title, Access: AccessExecute, Command: in.Command,
		Paths: []string{env.Cwd}, Content: []Content{commandContent(in.Command)}}
}

func (Shell) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in shellInput
	if r := decodeInput("shell", call.Input, &in); r != nil {
		return *r, nil
	}
	if strings.TrimSpace(in.Command) == "" {
		return ErrorResult(`shell needs a "command"`), nil
	}
	timeout := defaultShellTimeout
	if in.Timeout > 0 {
		timeout = min(time.Duration(in.Timeout)*time.Second, maxShellTimeout)
	}
	terms := env.terminals()
	prog, args := env.shellArgv(in.Command)
	id, err := terms.Create(ctx, TerminalRequest{
		Command: prog, Args: args, Cwd: env.Cwd,
		Env: shellEnv, OutputByteLimit: shellBufferLimit,
	})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return ErrorResult(fmt.Sprintf("cannot start the command: %v", err)), nil
	}
	var shown []Content
	if terms.Embedded() {
		shown = []Content{{Type: ContentTerminal, TerminalID: id}}
		if call.Progress != nil {
			call.Progress(shown)
		}
	}
	if in.Background {
		msg := fmt.Sprintf("Started in the background with shell id %s. Read its output with shell_output and stop it with shell_kill.", id)
		if shown == nil {
			shown = []Content{{Type: ContentText, Text: msg}}
		}
		return Result{Output: msg, Content: shown}, nil
	}

	// A client that cannot show the terminal sees its output as it comes.
	stopLive := func() {}
	if shown == nil && call.Live != nil {
		stopLive = streamOutput(ctx, terms, id, call.Live)
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	status, werr := terms.WaitForExit(wctx, id)
	cancel()
	stopLive()
	timedOut := false
	if werr != nil {
		// Cancelled or timed out: kill the whole tree before anything else.
		bg, stop := context.WithTimeout(context.WithoutCancel(ctx), killGrace)
		defer stop()
		_ = terms.Kill(bg, id)
		status, _ = terms.WaitForExit(bg, id)
		if ctx.Err() != nil {
			_ = terms.Release(bg, id)
			return Result{}, ctx.Err()
		}
		timedOut = true
	}
	bg, stop := context.WithTimeout(context.WithoutCancel(ctx), killGrace)
	defer stop()
	out, oerr := terms.Output(bg, id)
	_ = terms.Release(bg, id)
	if oerr != nil && !errors.Is(oerr, ErrNoTerminal) {
		return ErrorResult(fmt.Sprintf("cannot read the command's output: %v", oerr)), nil
	}
	text := formatShellOutput(out)
	failed := status.ExitCode == nil || *status.ExitCode != 0
	switch {
	case timedOut:
		text += fmt.Sprintf("\n[timed out after %s; the command and its children were killed]", timeout)
	case failed:
		text += "\n[" + status.String() + "]"
	}
	if shown == nil {
		shown = []Content{{Type: ContentText, Text: "```\n" + text + "\n```"}}
	}
	return Result{Output: text, IsError: timedOut || failed, Content: shown}, nil
}

// formatShellOutput caps a terminal's output for the model.
func formatShellOutput(out TerminalOutput) string {
	text := strings.TrimRight(out.Output, "\n")
	text = capText(text, shellHead, shellTail)
	if text == "" {
		text = "(no output)"
	}
	return text
}
