// Package print is corvid's print mode (`corvid run -p PROMPT`): one prompt,
// answered on stdout as it streams, with nobody to ask. It is a front end on
// internal/agent, like internal/acpserver: it opens (or resumes) a stored
// session, runs one turn, and writes the turn's events in the chosen format.
//
// Start with Run. Tool calls that would ask are refused with a message naming
// the flag or rule that would allow them (see front.RequestPermission).
package print

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/corvid-agent/corvid/internal/agent"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitError       = 1 // model, credentials, store, or a turn that could not finish
	ExitUsage       = 2
	ExitInterrupted = 130
)

// Formats.
const (
	FormatText       = "text"
	FormatJSON       = "json"
	FormatStreamJSON = "stream-json"
)

// Options configure one print-mode run.
type Options struct {
	Agent  *agent.Agent
	Prompt string
	Format string // FormatText (default), FormatJSON or FormatStreamJSON
	Cwd    string
	// Resume continues the stored session with this id; Continue continues
	// the newest stored session of Cwd.
	Resume   string
	Continue bool
	Stdout   io.Writer
	Stderr   io.Writer
	// Terminal says Stdout is a terminal: the text format's answer is
	// then written with its control characters as escapes (termsafe), so
	// that text an untrusted repository chose is shown, not obeyed, as ls
	// shows a file name. Into a pipe or a file it goes as the model wrote
	// it.
	Terminal bool
	// Progress writes a line on Stderr for each tool call (when stderr is a
	// terminal).
	Progress bool
	// TTY, if set (--ask in a terminal), is where permission questions are
	// asked and answered; without it a call that would ask is refused.
	TTY io.ReadWriter
}

// Run answers o.Prompt and returns the process exit code. ctx ending
// (SIGINT) cancels the turn: the exit code is then ExitInterrupted.
func Run(ctx context.Context, o Options) int {
	if o.Format == "" {
		o.Format = FormatText
	}
	out, err := newWriter(o.Format, o.Stdout, o.Terminal)
	if err != nil {
		fmt.Fprintln(o.Stderr, "corvid:", err)
		return ExitUsage
	}
	f := &front{out: out, stderr: o.Stderr, progress: o.Progress, titles: map[string]string{}}
	if o.TTY != nil {
		f.ask = ttyAsker(o.TTY)
	}
	s, err := openSession(ctx, o, f)
	if err != nil {
		return out.fail("", err, o.Stderr)
	}
	defer s.Close()
	out.start(s.ID)

	turn, err := s.StartTurn([]agent.Block{{Type: agent.BlockText, Text: o.Prompt}})
	if err != nil {
		return out.fail(s.ID, err, o.Stderr)
	}
	stopCancel := context.AfterFunc(ctx, s.Cancel)
	defer stopCancel()
	reason, err := turn.Run()
	if err != nil {
		return out.fail(s.ID, err, o.Stderr)
	}
	code := ExitOK
	switch reason {
	case agent.StopEndTurn:
	case agent.StopCancelled:
		code = ExitInterrupted
		fmt.Fprintln(o.Stderr, "corvid: interrupted")
	default:
		code = ExitError
		fmt.Fprintf(o.Stderr, "corvid: the turn stopped early: %s\n", reason)
	}
	out.finish(s.ID, string(reason), code != ExitOK)
	return code
}

// openSession starts a new session or resumes a stored one.
func openSession(ctx context.Context, o Options, f *front) (*agent.Session, error) {
	opts := agent.SessionOptions{Cwd: o.Cwd, Front: f}
	id := o.Resume
	if id == "" && o.Continue {
		list, _, err := o.Agent.ListSessions(ctx, o.Cwd, "")
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		if len(list) == 0 {
			return nil, fmt.Errorf("--continue: no earlier session in %s; start one without --continue", o.Cwd)
		}
		id = list[0].ID
	}
	if id == "" {
		s, err := o.Agent.NewSession(opts)
		if errors.Is(err, agent.ErrNoModel) {
			return nil, errors.New("no model credentials: set ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY, …), run `corvid auth login`, or pass -m script:FILE")
		}
		return s, err
	}
	opts.ID = id
	s, err := o.Agent.LoadSession(ctx, opts)
	if errors.Is(err, agent.ErrSessionNotFound) {
		return nil, fmt.Errorf("no stored session %s (see `corvid sessions`)", id)
	}
	return s, err
}
