package tui

import (
	"errors"
	"reflect"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestEditorCommandPrefersVisual(t *testing.T) {
	for _, c := range []struct {
		visual, editor string
		want           []string
	}{
		{"code --wait", "vi", []string{"code", "--wait"}},
		{"", "vi", []string{"vi"}},
		{"  ", "nano -w", []string{"nano", "-w"}},
		{"", "", nil},
	} {
		env := map[string]string{"VISUAL": c.visual, "EDITOR": c.editor}
		if got := editorCommand(func(k string) string { return env[k] }); !reflect.DeepEqual(got, c.want) {
			t.Errorf("VISUAL=%q EDITOR=%q: %q, want %q", c.visual, c.editor, got, c.want)
		}
	}
}

// Ctrl+G runs the editor (a command for bubbletea to exec); what the
// editor saved becomes the input, and a failed editor leaves it as it was.
func TestCtrlGEditsTheInput(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the temporary file no editor removes
	t.Setenv("VISUAL", "true")
	m := testModel()
	m.in.set("draft")
	if m.key(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl}) == nil {
		t.Fatal("Ctrl+G ran no editor")
	}
	m.Update(editedMsg{text: "first\nsecond\n"})
	if got := string(m.in.buf); got != "first\nsecond" {
		t.Errorf("input = %q after the editor", got)
	}
	m.Update(editedMsg{text: "", err: errors.New("exit status 1")})
	if got := string(m.in.buf); got != "first\nsecond" {
		t.Errorf("input = %q after a failed editor", got)
	}

	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "")
	if m.key(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl}) != nil || m.st.note == "" {
		t.Errorf("no editor set: no word of it (note %q)", m.st.note)
	}
}
