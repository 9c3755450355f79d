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

// The print filter reaches the model when Options.wrap wraps it (the
// program hands the filter the wrapper): a print is written at the size
// the program knows, and dropped for a retry when the terminal changed.
func TestPrintFilterReachesAWrappedModel(t *testing.T) {
	m := newModel(Options{}, newTheme(true, false))
	m.width, m.height = 80, 24
	w, h := 80, 24
	m.termSize = func() (int, int, error) { return w, h, nil }
	f := printFilter(m)
	root := panicky{Model: m}
	if got := f(root, printMsg{text: "a line"}); got == nil {
		t.Fatal("a print at the known size was dropped")
	} else if _, still := got.(printMsg); still {
		t.Fatal("the print went past the filter unwritten: it did not reach the wrapped model")
	}
	w = 100
	if got := f(root, printMsg{text: "a line"}); got != nil || !m.printSkipped {
		t.Fatalf("a print after a resize was let through (%T), printSkipped=%v; want it dropped for a retry", got, m.printSkipped)
	}
	if _, ok := f(root, tea.KeyPressMsg{}).(tea.KeyPressMsg); !ok {
		t.Fatal("the filter changed a message that is not a print")
	}
}
