package tui

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"

	tea "charm.land/bubbletea/v2"
)

// clipState is Ctrl+V's: the clipboard's reader (the system's unless a
// test put another), and whether a read is under way.
type clipState struct {
	reader clipboardReader
	busy   bool
}

// clipboardMsg is what reading the clipboard gave: an image, or why none.
type clipboardMsg struct {
	img clipImage
	err error
}

const clipReadingNote = "reading the clipboard…"

// pasteImage reads an image from the system clipboard (Ctrl+V, the
// paste_image action) in a command, off the event loop and within
// clipboardTimeout; clipboardRead attaches it. The input stays usable
// meanwhile. Text is pasted by the terminal's own paste (a bracketed
// paste), which Ctrl+V does not replace: in a terminal that pastes on
// Ctrl+V, the paste comes as text and this key never reaches the TUI.
func (m *model) pasteImage() tea.Cmd {
	if m.clip.busy {
		m.st.note = clipReadingNote
		return nil
	}
	if m.clip.reader == nil {
		m.clip.reader = systemClipboard{goos: runtime.GOOS, getenv: os.Getenv, lookPath: exec.LookPath}
	}
	r := m.clip.reader
	m.clip.busy = true
	m.st.note = clipReadingNote
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), clipboardTimeout)
		defer cancel()
		img, err := r.readImage(ctx)
		return clipboardMsg{img: img, err: err}
	}
}

// clipboardRead attaches the image read, or says in one line why nothing
// was attached: the clipboard holds none, no tool can read it, it is
// over the limit or not an image, or the model takes no images.
func (m *model) clipboardRead(msg clipboardMsg) {
	m.clip.busy = false
	if m.st.note == clipReadingNote {
		m.st.note = ""
	}
	var ce *clipError
	switch {
	case errors.As(msg.err, &ce):
		m.printLines(m.th.warn.Render("! nothing attached: " + ce.reason))
	case msg.err != nil:
		m.printLines(m.th.warn.Render("! nothing attached: the clipboard could not be read (" + oneLine(msg.err.Error()) + ")"))
	case m.ready && m.ag != nil && !m.ag.promptCaps().Image:
		m.printLines(m.th.warn.Render("! nothing attached: the model takes no images"))
	default:
		m.in.attachImage(msg.img)
	}
}
