package tui

import (
	"errors"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// editedMsg is the input as the editor left it.
type editedMsg struct {
	text string
	err  error
}

// editorCommand is the user's editor, $VISUAL else $EDITOR, as a program
// and its arguments ("code --wait"); nil when neither is set.
func editorCommand(getenv func(string) string) []string {
	for _, name := range []string{"VISUAL", "EDITOR"} {
		if f := strings.Fields(getenv(name)); len(f) > 0 {
			return f
		}
	}
	return nil
}

// editInEditor hands the terminal to the user's editor on a file holding
// the input; the input becomes what the editor saved (editedMsg).
func (m *model) editInEditor() tea.Cmd {
	argv := editorCommand(os.Getenv)
	if argv == nil {
		m.st.note = "set $VISUAL or $EDITOR to edit the prompt in an editor"
		return nil
	}
	f, err := os.CreateTemp("", "corvid-prompt-*.md")
	if err != nil {
		m.printLines(m.th.fail.Render("✗ " + err.Error()))
		return nil
	}
	path := f.Name()
	_, err = f.WriteString(m.in.editable()) // an image's placeholder as [image N]
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		m.printLines(m.th.fail.Render("✗ " + err.Error()))
		return nil
	}
	cmd := exec.Command(argv[0], append(argv[1:], path)...)
	cmd.Dir = m.opts.Cwd
	m.outDirect(true) // on the terminal before the editor has it
	return tea.ExecProcess(cmd, func(runErr error) tea.Msg {
		defer func() { _ = os.Remove(path) }()
		b, err := os.ReadFile(path)
		return editedMsg{text: string(b), err: errors.Join(runErr, err)}
	})
}

// edited puts the editor's text in the input, without the final new
// line editors add; an editor that failed leaves the input as it was.
func (m *model) edited(msg editedMsg) {
	m.outDirect(false)
	if msg.err != nil {
		m.printLines(m.th.fail.Render("✗ the editor: " + msg.err.Error()))
		return
	}
	m.in.set(dropImageMarks(strings.TrimRight(msg.text, "\n")))
	m.in.relink() // [image N] is image N again
}

// inputMsg handles what comes back for the input: the @ finder's file
// list, the editor's text, the clipboard's image.
func (m *model) inputMsg(msg tea.Msg) {
	switch msg := msg.(type) {
	case filesMsg:
		m.files = msg.files
		m.refreshFinder()
	case editedMsg:
		m.edited(msg)
	case clipboardMsg:
		m.clipboardRead(msg) // clippaste.go
	}
}
