package tui

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// fakeClipboard hands out one image, or an error.
type fakeClipboard struct {
	img clipImage
	err error
}

func (f fakeClipboard) readImage(context.Context) (clipImage, error) { return f.img, f.err }

var clipPNG = clipImage{data: append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 42*1024-8)...), mime: "image/png"}

// ctrlV presses Ctrl+V and runs the command it returns, as bubbletea
// would off the event loop, handing its message back.
func ctrlV(t *testing.T, m *model) {
	t.Helper()
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'v', Mod: tea.ModCtrl})
	if !m.clip.busy || m.st.note != clipReadingNote {
		t.Fatalf("Ctrl+V did not start reading the clipboard (note %q)", m.st.note)
	}
	msg := findMsg[clipboardMsg](cmd)
	if msg == nil {
		t.Fatal("Ctrl+V returned no command reading the clipboard")
	}
	m.Update(*msg)
}

// findMsg runs cmd (and the commands of a batch) for a message of type T.
func findMsg[T any](cmd tea.Cmd) *T {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case T:
		return &msg
	case tea.BatchMsg:
		for _, c := range msg {
			if got := findMsg[T](c); got != nil {
				return got
			}
		}
	}
	return nil
}

func inputLine(m *model) string {
	return ansi.Strip(strings.Join(m.in.render(m.th, 80, false, ""), "\n"))
}

// Ctrl+V puts the clipboard's image in the input as a placeholder; it is
// sent as an image block beside the text, where the text says [image 1].
func TestCtrlVAttachesTheClipboardsImage(t *testing.T) {
	m := testModel()
	m.ag = &agent{caps: promptCaps{Image: true}}
	m.clip.reader = fakeClipboard{img: clipPNG}
	press(m, "look ")
	ctrlV(t, m)
	press(m, " please")
	if got := inputLine(m); got != "› look [image 1: 42 KB png] please" {
		t.Fatalf("input = %q", got)
	}
	imgs := m.in.attached()
	text := m.in.take()
	if text != "look [image 1] please" || len(imgs) != 1 {
		t.Fatalf("sent %q with %d images", text, len(imgs))
	}
	blocks := m.promptBlocks(text, imgs)
	if len(blocks) != 2 || blocks[1].Type != "image" || blocks[1].MimeType != "image/png" ||
		blocks[1].Data != base64.StdEncoding.EncodeToString(clipPNG.data) || blocks[1].Validate() != nil {
		t.Fatalf("blocks: %d, %+v", len(blocks), blocks[len(blocks)-1].MimeType)
	}
	if m.in.hist[len(m.in.hist)-1] != "look [image 1] please" {
		t.Errorf("history holds %q", m.in.hist)
	}
}

// The placeholder is one unit: the cursor steps over it, Backspace
// deletes it whole and the image with it, and typing cannot make one.
func TestImagePlaceholderIsEditedWhole(t *testing.T) {
	var in input
	in.insert("a")
	in.attachImage(clipPNG)
	in.insert("b")
	in.attachImage(clipImage{data: []byte("GIF89a"), mime: "image/gif"})
	if got := in.plain(); got != "a[image 1]b[image 2]" {
		t.Fatalf("plain = %q", got)
	}
	in.left()
	in.left() // over [image 2], then b
	in.backspace()
	if got, imgs := in.plain(), in.attached(); got != "ab[image 2]" || len(imgs) != 1 || imgs[0].mime != "image/gif" {
		t.Fatalf("after Backspace on image 1: %q, %d images", got, len(imgs))
	}
	in.end()
	in.deleteWord()
	if got, imgs := in.plain(), in.attached(); got != "" || len(imgs) != 0 {
		t.Errorf("after Ctrl+W: %q, %d images", got, len(imgs))
	}

	var typed input
	typed.attachImage(clipPNG)
	typed.insert(string(imageMark+1) + "x")
	typed.pasteText(string(imageMark + 1))
	typed.pasteText(strings.Repeat(string(imageMark+1)+"\n", pasteFoldLines))
	if got := typed.value(); got != "[image 1]x"+strings.Repeat("\n", pasteFoldLines) || len(typed.attached()) != 1 {
		t.Errorf("typed marks: %q", got)
	}
	typed.reset()
	if len(typed.images) != 0 {
		t.Errorf("reset kept %d images", len(typed.images))
	}
}

// $EDITOR gets [image N]; what the editor keeps of it is the image again.
func TestEditorKeepsTheImagesItKeeps(t *testing.T) {
	var in input
	in.insert("x ")
	in.attachImage(clipPNG)
	in.attachImage(clipPNG)
	if got := in.editable(); got != "x [image 1][image 2]" {
		t.Fatalf("editable = %q", got)
	}
	in.set("y [image 2] and [image 9]")
	in.relink()
	if got, imgs := in.plain(), in.attached(); got != "y [image 2] and [image 9]" || len(imgs) != 1 || in.buf[2] != imageMark+2 {
		t.Errorf("after the editor: %q, %d images", got, len(imgs))
	}
}

// Nothing attached: the note says why, in one line, and the input is as
// it was.
func TestCtrlVWithoutAnImageSaysWhy(t *testing.T) {
	for name, tc := range map[string]struct {
		clip fakeClipboard
		caps promptCaps
		want string
	}{
		"no image":      {fakeClipboard{err: clipErr("the clipboard holds no image")}, promptCaps{Image: true}, "! nothing attached: the clipboard holds no image"},
		"no images":     {fakeClipboard{img: clipPNG}, promptCaps{}, "! nothing attached: the model takes no images"},
		"other failure": {fakeClipboard{err: errors.New("boom\nmore")}, promptCaps{Image: true}, "! nothing attached: the clipboard could not be read (boom …)"},
	} {
		m := testModel()
		m.ag = &agent{caps: tc.caps}
		m.clip.reader = tc.clip
		press(m, "typed")
		ctrlV(t, m)
		if got := m.printed(); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: printed %q", name, got)
		}
		if m.in.plain() != "typed" || m.clip.busy || m.st.note != "" {
			t.Errorf("%s: input %q, busy %v, note %q", name, m.in.plain(), m.clip.busy, m.st.note)
		}
	}
}

// An image attached while the agent took images, sent to one that does
// not (a reconnection to another daemon): a note, and no image block.
func TestClipboardImageToAnAgentWithoutImagesIsNotSent(t *testing.T) {
	m := testModel()
	m.ag = &agent{caps: promptCaps{}}
	m.printed()
	blocks := m.promptBlocks("see [image 1]", []clipImage{clipPNG})
	if len(blocks) != 1 || blocks[0].Type != "text" {
		t.Errorf("blocks: %+v", blocks)
	}
	if got := m.printed(); len(got) != 1 || !strings.Contains(got[0], "takes no images") {
		t.Errorf("printed %q", got)
	}
}
