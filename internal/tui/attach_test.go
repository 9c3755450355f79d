package tui

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeLines(t *testing.T, path string, n int) {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line " + itoa(i) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

// @path#20-45 sends those lines embedded, under the file's URI with the
// range; without embeddedContext the whole file is linked, with a note.
func TestAtRangeSendsTheLines(t *testing.T) {
	dir := t.TempDir()
	writeLines(t, filepath.Join(dir, "a.go"), 60)
	blocks, notes := attachments("look at @a.go#20-45 please", dir, promptCaps{EmbeddedContext: true})
	if len(blocks) != 1 || blocks[0].Type != "resource" || len(notes) != 0 {
		t.Fatalf("blocks %+v, notes %q", blocks, notes)
	}
	r := blocks[0].Resource
	if !strings.HasSuffix(r.URI, "/a.go#L20-45") || r.Text == nil {
		t.Fatalf("resource %+v", r)
	}
	lines := strings.Split(*r.Text, "\n")
	if len(lines) != 26 || lines[0] != "line 20" || lines[25] != "line 45" {
		t.Errorf("the range holds %d lines, %q … %q", len(lines), lines[0], lines[len(lines)-1])
	}
	if blocks[0].Validate() != nil {
		t.Errorf("invalid block: %v", blocks[0].Validate())
	}

	one, _ := attachments("@a.go#L7", dir, promptCaps{EmbeddedContext: true})
	if len(one) != 1 || one[0].Resource == nil || *one[0].Resource.Text != "line 07" {
		t.Errorf("#L7: %+v", one)
	}
	link, notes := attachments("@a.go#20-45", dir, promptCaps{})
	if len(link) != 1 || link[0].Type != "resource_link" || len(notes) != 1 || !strings.Contains(notes[0], "no embedded") {
		t.Errorf("without embeddedContext: %+v, %q", link, notes)
	}
	past, notes := attachments("@a.go#70-80", dir, promptCaps{EmbeddedContext: true})
	if len(past) != 1 || past[0].Type != "resource_link" || len(notes) != 1 || !strings.Contains(notes[0], "60 lines") {
		t.Errorf("past the end: %+v, %q", past, notes)
	}
	if err := os.WriteFile(filepath.Join(dir, "c#1.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hash, _ := attachments("@c#1.txt", dir, promptCaps{EmbeddedContext: true})
	if len(hash) != 1 || hash[0].Type != "resource_link" || hash[0].Name != "c#1.txt" {
		t.Errorf("a # in the file's name: %+v", hash)
	}
	whole, notes := attachments("@a.go and a@b.go", dir, promptCaps{EmbeddedContext: true})
	if len(whole) != 1 || whole[0].Type != "resource_link" || len(notes) != 0 {
		t.Errorf("@a.go: %+v, %q", whole, notes)
	}
}

// An @-named image, or an image's path pasted as a word of its own, goes
// as an image block when the agent takes images; else the path stays in
// the text and the user is told.
func TestImagesGoAsImageBlocks(t *testing.T) {
	dir := t.TempDir()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	shot := filepath.Join(dir, "shot.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cat.JPEG"), []byte("\xff\xd8\xff\xe0fake"), 0o644); err != nil {
		t.Fatal(err)
	}
	blocks, notes := attachments("what is in '"+shot+"' and @cat.JPEG and notes.png", dir, promptCaps{Image: true})
	if len(blocks) != 2 || len(notes) != 0 {
		t.Fatalf("blocks %+v, notes %q", blocks, notes)
	}
	if blocks[0].Type != "image" || blocks[0].MimeType != "image/png" || blocks[0].Data != base64.StdEncoding.EncodeToString(png) {
		t.Errorf("pasted path: %+v", blocks[0])
	}
	if blocks[1].Type != "image" || blocks[1].MimeType != "image/jpeg" {
		t.Errorf("@ image: %+v", blocks[1])
	}
	none, notes := attachments("what is in "+shot, dir, promptCaps{EmbeddedContext: true})
	if len(none) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "takes no images") {
		t.Errorf("without image support: %+v, %q", none, notes)
	}
}

// # on the @ finder's pick starts a line range after the path.
func TestFinderHashStartsARange(t *testing.T) {
	m := testModel()
	m.files, m.filesAsked = []string{"src/widget.go", "zzz.txt"}, true
	press(m, "see @widg", "#20-45")
	if got := string(m.in.buf); got != "see @src/widget.go#20-45" {
		t.Errorf("input = %q, want the pick and the range", got)
	}
}
