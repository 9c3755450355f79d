package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// Terminals runs commands the way ACP's terminal/* methods do (create,
// output, wait_for_exit, kill, release), so that the shell tool can run
// either in-process (LocalTerminals) or in the user's editor.
//
// An implementation must kill a command's whole process tree on Kill and on
// Release of a running terminal, must be safe for concurrent use, and must
// return an error wrapping ErrNoTerminal for an unknown or released id (the
// shell_output and shell_kill tools tell the model so).
type Terminals interface {
	// Create starts a command and returns its terminal id.
	Create(ctx context.Context, req TerminalRequest) (string, error)
	// Output returns the output so far and, once exited, the exit status.
	Output(ctx context.Context, id string) (TerminalOutput, error)
	// WaitForExit blocks until the command exits or ctx ends.
	WaitForExit(ctx context.Context, id string) (ExitStatus, error)
	// Kill stops the command; the terminal stays readable until released.
	Kill(ctx context.Context, id string) error
	// Release kills the command if still running and frees the terminal.
	Release(ctx context.Context, id string) error
	// Embedded reports whether terminal ids name terminals the user's
	// client displays, so that a tool call may show them (ACP terminal
	// content). False for LocalTerminals.
	Embedded() bool
}

// TerminalRequest is a command to start (ACP CreateTerminalRequest).
type TerminalRequest struct {
	Command         string
	Args            []string
	Cwd             string
	Env             []EnvVar // added to the inherited environment
	OutputByteLimit int      // 0: the implementation's default
}

// EnvVar is one environment variable.
type EnvVar struct{ Name, Value string }

// ExitStatus is how a command ended: ExitCode when it exited, Signal (e.g.
// "SIGKILL") when a signal ended it.
type ExitStatus struct {
	ExitCode *int
	Signal   string
}

// String renders the status for the model.
func (s ExitStatus) String() string {
	switch {
	case s.ExitCode != nil:
		return "exit code " + strconv.Itoa(*s.ExitCode)
	case s.Signal != "":
		return "killed by " + s.Signal
	}
	return "ended"
}

// TerminalOutput is what a terminal printed so far (stdout and stderr
// interleaved). Exit is nil while the command runs.
type TerminalOutput struct {
	Output    string
	Truncated bool
	Exit      *ExitStatus
}

// ErrNoTerminal is returned for an unknown or released terminal id.
var ErrNoTerminal = errors.New("no such terminal")

// defaultLocalOutput is LocalTerminals' output limit when a request sets none.
const defaultLocalOutput = 1 << 20

var defaultTerminals = NewLocalTerminals()

// LocalTerminals runs commands as child processes, each in its own process
// group so that killing it kills every descendant. When a command's main
// process exits, what it left running in its group is killed too.
type LocalTerminals struct {
	mu     sync.Mutex
	next   int
	terms  map[string]*localTerminal
	closed bool
}

// NewLocalTerminals returns an empty set of in-process terminals.
func NewLocalTerminals() *LocalTerminals {
	return &LocalTerminals{terms: map[string]*localTerminal{}}
}

type localTerminal struct {
	pgid int
	out  *headTailBuffer
	done chan struct{} // closed once exited and output drained
	exit ExitStatus    // valid after done
}

// Embedded is false: the client cannot display in-process terminals.
func (*LocalTerminals) Embedded() bool { return false }

// Create starts req.Command in its own process group with stdin closed.
func (lt *LocalTerminals) Create(ctx context.Context, req TerminalRequest) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	cmd := exec.Command(req.Command, req.Args...)
	cmd.Dir = req.Cwd
	cmd.Env = os.Environ()
	for _, e := range req.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	inOwnGroup(cmd)
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("create terminal: %w", err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	limit := req.OutputByteLimit
	if limit <= 0 {
		limit = defaultLocalOutput
	}
	t := &localTerminal{out: newHeadTailBuffer(limit), done: make(chan struct{})}

	lt.mu.Lock()
	if lt.closed {
		lt.mu.Unlock()
		r.Close()
		w.Close()
		return "", errors.New("create terminal: terminals are closed")
	}
	if err := cmd.Start(); err != nil {
		lt.mu.Unlock()
		r.Close()
		w.Close()
		return "", fmt.Errorf("start %s: %w", req.Command, err)
	}
	lt.next++
	id := "term-" + strconv.Itoa(lt.next)
	t.pgid = cmd.Process.Pid
	lt.terms[id] = t
	lt.mu.Unlock()
	w.Close()

	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			t.out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		// Whatever the command left behind in its group goes with it;
		// that also closes the pipe's last writers.
		killGroup(t.pgid)
		select {
		case <-drained:
		case <-time.After(2 * time.Second):
			// A descendant escaped the group (setsid) holding the pipe.
		}
		r.Close()
		t.exit = exitStatus(cmd.ProcessState, err)
		close(t.done)
	}()
	return id, nil
}

func exitStatus(ps *os.ProcessState, err error) ExitStatus {
	if ps == nil {
		code := -1
		return ExitStatus{ExitCode: &code}
	}
	if sig := killedBy(ps); sig != "" {
		return ExitStatus{Signal: sig}
	}
	code := ps.ExitCode()
	return ExitStatus{ExitCode: &code}
}

func (lt *LocalTerminals) get(id string) (*localTerminal, error) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	t, ok := lt.terms[id]
	if !ok {
		return nil, fmt.Errorf("terminal %s: %w", id, ErrNoTerminal)
	}
	return t, nil
}

// Output returns the output so far.
func (lt *LocalTerminals) Output(_ context.Context, id string) (TerminalOutput, error) {
	t, err := lt.get(id)
	if err != nil {
		return TerminalOutput{}, err
	}
	var o TerminalOutput
	select {
	case <-t.done:
		st := t.exit
		o.Exit = &st
	default:
	}
	o.Output, o.Truncated = t.out.String()
	return o, nil
}

// WaitForExit waits for the command to exit.
func (lt *LocalTerminals) WaitForExit(ctx context.Context, id string) (ExitStatus, error) {
	t, err := lt.get(id)
	if err != nil {
		return ExitStatus{}, err
	}
	select {
	case <-t.done:
		return t.exit, nil
	case <-ctx.Done():
		return ExitStatus{}, ctx.Err()
	}
}

// Kill sends SIGKILL to the command's process group.
func (lt *LocalTerminals) Kill(_ context.Context, id string) error {
	t, err := lt.get(id)
	if err != nil {
		return err
	}
	t.kill()
	return nil
}

func (t *localTerminal) kill() {
	select {
	case <-t.done:
	default:
		killGroup(t.pgid)
	}
}

// Release kills the command if it still runs and forgets the terminal.
func (lt *LocalTerminals) Release(_ context.Context, id string) error {
	lt.mu.Lock()
	t, ok := lt.terms[id]
	delete(lt.terms, id)
	lt.mu.Unlock()
	if !ok {
		return fmt.Errorf("terminal %s: %w", id, ErrNoTerminal)
	}
	t.kill()
	return nil
}

// Close kills every command still running, waits briefly for them to be
// reaped, and refuses new ones. Call it when the session ends.
func (lt *LocalTerminals) Close() error {
	lt.mu.Lock()
	lt.closed = true
	terms := lt.terms
	lt.terms = map[string]*localTerminal{}
	lt.mu.Unlock()
	deadline := time.After(2 * time.Second)
	for _, t := range terms {
		t.kill()
	}
	for _, t := range terms {
		select {
		case <-t.done:
		case <-deadline:
			return errors.New("close terminals: some commands did not exit")
		}
	}
	return nil
}
