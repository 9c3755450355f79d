package tui_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// @path#2-3 sends lines 2–3 embedded, and a pasted image path an image
// block, to a model that takes images: the stored session holds both.
func TestAtRangeAndImageReachTheAgent(t *testing.T) {
	s := newSession(t)
	model := s.script("img.json", `{"images": true, "responses": [{"parts": [{"type": "text", "text": "Seen."}]}]}`)
	must(t, os.WriteFile(filepath.Join(s.dir, "a.txt"), []byte("one\ntwo-of-range\nthree-of-range\nfour\n"), 0o644))
	png := []byte("\x89PNG\r\n\x1a\nfake-image-bytes")
	must(t, os.WriteFile(filepath.Join(s.dir, "shot.png"), png, 0o644))
	tm := s.open(100, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("see @a.txt#2-3 and " + filepath.Join(s.dir, "shot.png"))
	tm.keys("Enter")
	tm.waitFor("Seen.")
	tm.idle()
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
	id := firstSessionID(t, runCorvid(t, s, "sessions", "list"))
	stored := runCorvid(t, s, "sessions", "export", "--format", "jsonl", id)
	if !strings.Contains(stored, `two-of-range\nthree-of-range`) || strings.Contains(stored, "four") || !strings.Contains(stored, "a.txt#L2-3") {
		t.Errorf("the prompt was not stored with lines 2-3 of a.txt:\n%s", stored)
	}
	if !strings.Contains(stored, base64.StdEncoding.EncodeToString(png)) {
		t.Errorf("the prompt was not stored with the image:\n%s", stored)
	}
}

// A model without images: the TUI says so and sends the path as text.
func TestImageToAModelWithoutImages(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Seen."}]}]}`)
	must(t, os.WriteFile(filepath.Join(s.dir, "shot.png"), []byte("\x89PNG\r\n\x1a\n"), 0o644))
	tm := s.open(100, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("see @shot.png please")
	tm.keys("Enter")
	tm.waitFor("Seen.")
	// The note is printed with the prompt, above the live region: it may
	// reach the scrollback after the answer was drawn live.
	tm.waitFor("the model takes no images")
}
