package tui

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// panicky is the TUI's model with a bug: it panics at the first key, in
// Update itself or in the command Update returns.
type panicky struct {
	tea.Model
	inCmd bool
}

func (p panicky) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tea.KeyPressMsg); ok {
		if p.inCmd {
			return p, func() tea.Msg { panic("a bug in a command") }
		}
		panic("a bug in Update")
	}
	m, cmd := p.Model.Update(msg)
	p.Model = m
	return p, cmd
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A panic in the UI ends Run without an error (the program exits 0),
// with the terminal's modes reset and the user told; the agent is closed.
func TestPanicRestoresTheTerminalAndEndsWithoutError(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, inCmd := range []bool{false, true} {
		inR, inW := io.Pipe()
		var out, errOut syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- Run(Options{Agent: []string{sh, "-c", "exec cat >/dev/null"}, Cwd: t.TempDir(), Theme: "dark",
				In: inR, Out: &out, Stderr: &errOut,
				wrap: func(m tea.Model) tea.Model { return panicky{Model: m, inCmd: inCmd} }})
		}()
		time.Sleep(200 * time.Millisecond)
		_, _ = inW.Write([]byte("x"))
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("inCmd=%v: Run returned %v after a panic; want nil (exit 0)", inCmd, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("inCmd=%v: Run did not return after a panic", inCmd)
		}
		inW.Close()
		if !strings.Contains(errOut.String(), "the terminal is restored") {
			t.Errorf("inCmd=%v: the user is not told: %q", inCmd, errOut.String())
		}
		// Bracketed paste off and the cursor shown: what the UI turned on
		// is turned off again.
		for _, seq := range []string{"\x1b[?2004l", "\x1b[?25h"} {
			if !strings.Contains(out.String(), seq) {
				t.Errorf("inCmd=%v: the output lacks the reset %q: %q", inCmd, seq, out.String())
			}
		}
	}
}
