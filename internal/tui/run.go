package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/term"
)

// Options configure the TUI.
type Options struct {
	// Agent is the command that speaks ACP on its stdio: `corvid acp`
	// with the user's flags.
	Agent []string
	// Cwd is the session's directory.
	Cwd string
	// Continue opens the newest session of Cwd; Resume opens that one.
	Continue bool
	Resume   string
	// ModelLabel is shown on the status line until the agent names its
	// model.
	ModelLabel string
	// Theme is "light", "dark" or "" (ask the terminal).
	Theme string
	// LoginHint is told when the agent wants a login before a session.
	LoginHint string
	// NoColor turns colour off (NO_COLOR).
	NoColor bool
	// Endpoint names the daemon the agent command connects to (`corvid
	// acp --connect ENDPOINT`): it is shown on the status line, and when
	// the command ends the TUI starts it again and re-attaches the
	// session (connect.go). Empty: the agent is a process of its own, and
	// its end ends the TUI.
	Endpoint string

	// In and Out default to the process's terminal; Stderr (where a
	// panic is told) to the process's.
	In     io.Reader
	Out    io.Writer
	Stderr io.Writer

	// Keys maps a keystroke (as tuiargs.Key writes it) to its action
	// (tuiargs.Actions); nil: the default keys.
	Keys map[string]string
	// Notes are printed when the TUI opens (what is wrong with [tui.keys]).
	Notes []string

	// wrap, when set, wraps the model (tests make it panic).
	wrap func(tea.Model) tea.Model
}

// drawFPS caps the frames drawn a second. A typed key is drawn at the next
// frame, so 120 keeps an echo within 8.3 ms while the agent streams; the
// stream itself wakes the UI at most 60 times a second (updateFrame), and
// bubbletea (v2.2) stops its frame ticker after half a second with nothing
// to draw, so idle costs nothing whatever the rate.
const drawFPS = 120

// leaveTopRow writes one line before the first frame, so that the live
// region never starts on the screen's top row. bubbletea redraws a frame
// of another height by erasing from the live region's first row down
// (CSI J); when that row is the screen's first and the cursor is on its
// first cell, tmux (3.3 on, its default scroll-on-clear) takes the erase
// for a cleared screen and scrolls the old frame into its history: every
// change of the live region's height left a copy of it there (the input,
// the status line, a streamed answer drawn live) until a print moved the
// region down. A TUI started in a new tmux window or after `clear` starts
// on that row. The line is the blank one the first prompt would print
// above itself (prompt leaves it out while fresh).
func leaveTopRow(m *model, out io.Writer) {
	if _, err := out.Write([]byte("\r\n")); err == nil {
		m.fresh = true
	}
}

// Run opens the TUI and returns when the user quits. The terminal is
// restored however it ends: bubbletea catches a panic in the UI (in
// Update, View or a command), restores the terminal and prints the trace;
// Run then says what happened and returns nil, so the program exits 0 as
// after any other ending. The agent is closed as an editor closes it.
func Run(opts Options) error {
	if len(opts.Agent) == 0 {
		return errors.New("tui: no agent command")
	}
	th := newTheme(opts.Theme != "light", !opts.NoColor)
	m := newModel(opts, th)
	if opts.Out == nil {
		fd := int(os.Stdout.Fd())
		m.termSize = func() (int, int, error) { return term.GetSize(fd) }
	}
	// tmux and xterm.js re-wrap rows when they narrow (rewrap.go); other
	// terminals may not, and a move up over rows they did not add would
	// erase printed lines.
	m.rewraps = rewrapperOf(os.Getenv)
	popts := []tea.ProgramOption{tea.WithFPS(drawFPS), tea.WithFilter(printFilter(m))}
	if opts.In != nil {
		popts = append(popts, tea.WithInput(opts.In))
	}
	// The output counts its writes (anchor.go).
	var w io.Writer = os.Stdout
	if opts.Out != nil {
		w = opts.Out
	}
	out := m.output(w)
	popts = append(popts, tea.WithOutput(out))
	leaveTopRow(m, out)
	var root tea.Model = m
	if opts.wrap != nil {
		root = opts.wrap(m)
	}
	p := tea.NewProgram(root, popts...)
	m.send = func(msg any) { p.Send(msg) }
	ag, err := startAgent(opts.Agent, opts.Cwd, m.send, opts.Endpoint == "")
	if err != nil {
		return err
	}
	m.ag = ag
	_, runErr := p.Run()
	if m.out != nil {
		_ = m.out.Close() // the terminal's restoring included
	}
	m.ag.close(2 * time.Second)
	if errors.Is(runErr, tea.ErrProgramPanic) {
		stderr := opts.Stderr
		if stderr == nil {
			stderr = os.Stderr
		}
		fmt.Fprintln(stderr, "corvid-tui: the terminal UI stopped on an internal error (a bug, please report it with the trace above); the terminal is restored, and the session is stored: corvid tui -c reopens it.")
		return nil
	}
	if errors.Is(runErr, tea.ErrProgramKilled) {
		runErr = nil
	}
	if runErr != nil {
		return fmt.Errorf("tui: %w", runErr)
	}
	return nil
}
