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

	// In and Out default to the process's terminal.
	In  io.Reader
	Out io.Writer
}

// Run opens the TUI and returns when the user quits. The terminal is
// restored however it ends (bubbletea restores it after a panic in the
// UI too); the agent is closed as an editor closes it.
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
	popts := []tea.ProgramOption{tea.WithFPS(60), tea.WithFilter(filter)}
	if opts.In != nil {
		popts = append(popts, tea.WithInput(opts.In))
	}
	// The output counts its writes (anchor.go).
	if f, ok := opts.Out.(*os.File); ok || opts.Out == nil {
		if !ok {
			f = os.Stdout
		}
		out := &countingFile{File: f}
		m.writes = out.n.Load
		popts = append(popts, tea.WithOutput(out))
	} else {
		out := &countingWriter{w: opts.Out}
		m.writes = out.n.Load
		popts = append(popts, tea.WithOutput(out))
	}
	p := tea.NewProgram(m, popts...)
	ag, err := startAgent(opts.Agent, opts.Cwd, func(msg any) { p.Send(msg) })
	if err != nil {
		return err
	}
	m.ag = ag
	_, runErr := p.Run()
	ag.close(2 * time.Second)
	if errors.Is(runErr, tea.ErrProgramKilled) {
		runErr = nil
	}
	if runErr != nil {
		return fmt.Errorf("tui: %w", runErr)
	}
	return nil
}
