package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// terminals is the editor's in-process implementation of terminal/*: real processes run
// with os/exec, output captured (stdout and stderr interleaved) up to outputByteLimit.
type terminals struct {
	mu   sync.Mutex
	next int
	byID map[string]*terminal
	all  []*terminal
}

func (ts *terminals) init() { ts.byID = map[string]*terminal{} }

type terminal struct {
	id      string
	command string
	args    []string
	cmd     *exec.Cmd
	done    chan struct{}

	mu        sync.Mutex
	out       []byte
	limit     int // 0 = unlimited
	truncated bool
	exitCode  *int
	signal    *string
	released  bool
	killed    bool
}

// Write keeps the tail of the output within the limit, cutting at a rune boundary.
func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = append(t.out, p...)
	if t.limit > 0 && len(t.out) > t.limit {
		cut := len(t.out) - t.limit
		for cut < len(t.out) && !utf8.RuneStart(t.out[cut]) {
			cut++
		}
		t.out = append([]byte(nil), t.out[cut:]...)
		t.truncated = true
	}
	return len(p), nil
}

func (t *terminal) exitStatus() map[string]any {
	return map[string]any{"exitCode": t.exitCode, "signal": t.signal}
}

// TerminalCall records one terminal/* request.
type TerminalCall struct {
	Method     string
	TerminalID string
	Command    string   // terminal/create only
	Args       []string // terminal/create only
	Error      *RPCError
}

// TerminalState is the state of a terminal the agent created.
type TerminalState struct {
	ID, Command string
	Args        []string
	Output      string
	Exited      bool
	ExitCode    *int
	Signal      *string
	Killed      bool
	Released    bool
}

// Terminals returns every terminal the agent created, released or not.
func (e *Editor) Terminals() []TerminalState {
	e.terms.mu.Lock()
	all := append([]*terminal(nil), e.terms.all...)
	e.terms.mu.Unlock()
	var out []TerminalState
	for _, t := range all {
		t.mu.Lock()
		st := TerminalState{ID: t.id, Command: t.command, Args: t.args, Output: string(t.out),
			ExitCode: t.exitCode, Signal: t.signal, Killed: t.killed, Released: t.released}
		t.mu.Unlock()
		select {
		case <-t.done:
			st.Exited = true
		default:
		}
		out = append(out, st)
	}
	return out
}

// TerminalCalls returns every terminal/* request so far.
func (e *Editor) TerminalCalls() []TerminalCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]TerminalCall(nil), e.termCalls...)
}

func (ts *terminals) killAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.all {
		acpkit.KillGroup(t.cmd)
	}
}

func (e *Editor) serveTerminal(ctx context.Context, m Message) (any, *RPCError) {
	var p struct {
		TerminalID      string   `json:"terminalId"`
		Command         string   `json:"command"`
		Args            []string `json:"args"`
		Env             []struct{ Name, Value string }
		Cwd             string `json:"cwd"`
		OutputByteLimit *int   `json:"outputByteLimit"`
	}
	_ = json.Unmarshal(m.Params, &p)
	call := TerminalCall{Method: m.Method, TerminalID: p.TerminalID}
	result, rerr := func() (any, *RPCError) {
		if m.Method == "terminal/create" {
			call.Command, call.Args = p.Command, p.Args
			t, rerr := e.createTerminal(p.Command, p.Args, p.Env, p.Cwd, p.OutputByteLimit)
			if rerr != nil {
				return nil, rerr
			}
			call.TerminalID = t.id
			return map[string]any{"terminalId": t.id}, nil
		}
		e.terms.mu.Lock()
		t := e.terms.byID[p.TerminalID]
		e.terms.mu.Unlock()
		if t == nil {
			e.t.Errorf("testkit: agent called %s with unknown or released terminal %q", m.Method, p.TerminalID)
			return nil, &RPCError{Code: CodeInvalidParams, Message: "Invalid params", Data: mustJSON(map[string]string{"details": "unknown terminal " + p.TerminalID})}
		}
		switch m.Method {
		case "terminal/output":
			t.mu.Lock()
			defer t.mu.Unlock()
			res := map[string]any{"output": string(t.out), "truncated": t.truncated}
			select {
			case <-t.done:
				res["exitStatus"] = t.exitStatus()
			default:
			}
			return res, nil
		case "terminal/wait_for_exit":
			select {
			case <-t.done:
			case <-ctx.Done():
				return nil, &RPCError{Code: CodeRequestCancelled, Message: "Request cancelled"}
			}
			t.mu.Lock()
			defer t.mu.Unlock()
			return t.exitStatus(), nil
		case "terminal/kill":
			t.mu.Lock()
			t.killed = true
			t.mu.Unlock()
			acpkit.KillGroup(t.cmd)
			return map[string]any{}, nil
		case "terminal/release":
			acpkit.KillGroup(t.cmd)
			t.mu.Lock()
			t.released = true
			t.mu.Unlock()
			e.terms.mu.Lock()
			delete(e.terms.byID, t.id)
			e.terms.mu.Unlock()
			return map[string]any{}, nil
		}
		return nil, &RPCError{Code: CodeMethodNotFound, Message: "Method not found"}
	}()
	call.Error = rerr
	e.mu.Lock()
	e.termCalls = append(e.termCalls, call)
	e.broadcastLocked()
	e.mu.Unlock()
	return result, rerr
}

// createTerminal starts the command. Without args the command line is run by /bin/sh -c,
// as editors run a command string in a shell; with args it is executed directly.
func (e *Editor) createTerminal(command string, args []string, env []struct{ Name, Value string }, cwd string, limit *int) (*terminal, *RPCError) {
	if cwd != "" && !filepath.IsAbs(cwd) {
		e.t.Errorf("testkit: agent sent a relative cwd %q to terminal/create (paths must be absolute)", cwd)
		return nil, &RPCError{Code: CodeInvalidParams, Message: "Invalid params", Data: mustJSON(map[string]string{"details": "cwd must be absolute"})}
	}
	if cwd == "" {
		cwd = e.dir
	}
	var cmd *exec.Cmd
	if len(args) == 0 {
		cmd = exec.Command("/bin/sh", "-c", command)
	} else {
		cmd = exec.Command(command, args...)
	}
	cmd.Dir = cwd
	cmd.Env = append([]string(nil), e.env...)
	for _, kv := range env {
		cmd.Env = append(cmd.Env, kv.Name+"="+kv.Value)
	}
	acpkit.OwnGroup(cmd)
	cmd.WaitDelay = time.Second

	e.terms.mu.Lock()
	id := fmt.Sprintf("term-%d", e.terms.next)
	e.terms.next++
	e.terms.mu.Unlock()
	t := &terminal{id: id, command: command, args: args, cmd: cmd, done: make(chan struct{})}
	if limit != nil {
		t.limit = *limit
	}
	cmd.Stdout, cmd.Stderr = t, t
	if err := cmd.Start(); err != nil {
		// Like a shell: a command that cannot start exits 127 with the error as output.
		fmt.Fprintf(t, "%v\n", err)
		code := 127
		t.exitCode = &code
		close(t.done)
	} else {
		go func() {
			_ = cmd.Wait()
			t.mu.Lock()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				sig := signalName(ws.Signal())
				t.signal = &sig
			} else {
				code := cmd.ProcessState.ExitCode()
				t.exitCode = &code
			}
			t.mu.Unlock()
			close(t.done)
		}()
	}
	e.terms.mu.Lock()
	e.terms.byID[id] = t
	e.terms.all = append(e.terms.all, t)
	e.terms.mu.Unlock()
	return t, nil
}

// signalName spells a signal the way editors report it ("SIGKILL").
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return sig.String()
}
