package tui

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func names(ws []promptWord) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.name)
	}
	return out
}

// What terminals paste for a dropped file is read as the file's name;
// the apostrophes and quotes of prose are left as they are.
func TestPromptWordsTakeOffAPastedPathsQuoting(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("backslash separates a path's parts on Windows")
	}
	for _, c := range []struct {
		text string
		want []string
	}{
		{`see /tmp/my\ shot.png now`, []string{"see", "/tmp/my shot.png", "now"}},
		{`'/tmp/my shot.png' `, []string{"/tmp/my shot.png"}},
		{`"/tmp/my shot.png"`, []string{"/tmp/my shot.png"}},
		{`'/tmp/it'\''s here.png'`, []string{"/tmp/it's here.png"}},
		{`/tmp/a\ \(1\)\&b.png`, []string{"/tmp/a (1)&b.png"}},
		{`"/tmp/say \"hi\".png"`, []string{`/tmp/say "hi".png`}},
		{`@'my notes.md'`, []string{"@my notes.md"}},
		{`file:///tmp/my%20shot.png`, []string{"/tmp/my shot.png"}},
		{`file://elsewhere/tmp/x.png`, []string{"file://elsewhere/tmp/x.png"}},
		{`what's /tmp/a.png it's`, []string{"what's", "/tmp/a.png", "it's"}},
		{`don't do 'this' ok`, []string{"don't", "do", "this", "ok"}},
		{`'unclosed /tmp/a.png`, []string{"unclosed", "/tmp/a.png"}},
		{`trailing\`, []string{`trailing\`}},
		{"tab\tand\nnewline", []string{"tab", "and", "newline"}},
	} {
		if got := names(promptWords(c.text)); !slices.Equal(got, c.want) {
			t.Errorf("promptWords(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// A path pasted with its spaces backslash-escaped, or quoted, names the
// image file; so does a file:// URL.
func TestEscapedImagePathGoesAsAnImageBlock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("backslash separates a path's parts on Windows")
	}
	dir := t.TempDir()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	shot := filepath.Join(dir, "my shot (1).png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	escaped := strings.NewReplacer(" ", `\ `, "(", `\(`, ")", `\)`).Replace(shot)
	for _, text := range []string{
		"what is in " + escaped + " ?",
		"what is in '" + shot + "'",
		"what is in file://" + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(shot, " ", "%20"), "(", "%28"), ")", "%29"),
	} {
		blocks, notes := attachments(text, dir, promptCaps{Image: true})
		if len(blocks) != 1 || blocks[0].Type != "image" || blocks[0].MimeType != "image/png" || len(notes) != 0 {
			t.Errorf("%q: blocks %+v, notes %q", text, blocks, notes)
		}
	}
}

// The text after escaping is read back as the word escaped, whatever
// the word: backslash before every character a shell treats specially,
// or single quotes with a quote inside written '\”.
func FuzzPromptWordsReadBackEscapedNames(f *testing.F) {
	if runtime.GOOS == "windows" {
		f.Skip("backslash separates a path's parts on Windows")
	}
	for _, s := range []string{"/tmp/my shot.png", "it's", `a\b`, `"q"`, "ünï cødé.png", "@x y", "file:///x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		// Terminals escape spaces, not tabs or new lines; a file:// URL is
		// read as its path.
		if name == "" || !utf8.ValidString(name) || strings.HasPrefix(name, "file://") ||
			strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) && r != ' ' }) {
			t.Skip()
		}
		var esc strings.Builder
		for _, r := range name {
			if strings.ContainsRune(" \\'\"()&;|<>$`*?[]{}!#~", r) {
				esc.WriteByte('\\')
			}
			esc.WriteRune(r)
		}
		single := "'" + strings.ReplaceAll(name, "'", `'\''`) + "'"
		for _, text := range []string{esc.String(), single, "see " + esc.String() + " and " + single} {
			ws := promptWords(text)
			if !slices.ContainsFunc(ws, func(w promptWord) bool { return w.name == name }) {
				t.Fatalf("promptWords(%q) = %q: %q is not among them", text, names(ws), name)
			}
		}
	})
}

// An image named with ../ or through a symlink is read as an @-named
// file is: the path as the user wrote it, links followed, regular files
// only. A link to a device or a FIFO is never read (it would never end,
// or hold the UI), and a file whose bytes are not an image is sent as
// its path, whatever its name says.
func TestImagePathsFollowTheRulesOfNamedFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and FIFOs")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	png := []byte("\x89PNG\r\n\x1a\nup")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(dir, 0o755))
	must(os.WriteFile(filepath.Join(root, "up.png"), png, 0o644))
	must(os.Symlink(filepath.Join(root, "up.png"), filepath.Join(dir, "link.png")))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero.png")))
	must(syscallMkfifo(filepath.Join(dir, "fifo.png")))
	must(os.WriteFile(filepath.Join(dir, "text.png"), []byte("not an image at all"), 0o644))

	blocks, notes := attachments("../up.png and link.png", dir, promptCaps{Image: true})
	if len(blocks) != 2 || len(notes) != 0 || blocks[0].MimeType != "image/png" || blocks[1].MimeType != "image/png" {
		t.Errorf("../ and a symlink: blocks %+v, notes %q", blocks, notes)
	}
	blocks, notes = attachments("zero.png fifo.png @zero.png", dir, promptCaps{Image: true})
	if len(blocks) != 0 || len(notes) != 0 {
		t.Errorf("a device and a FIFO: blocks %+v, notes %q", blocks, notes)
	}
	blocks, notes = attachments("what is text.png", dir, promptCaps{Image: true})
	if len(blocks) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "not an image") {
		t.Errorf("a .png that is text: blocks %+v, notes %q", blocks, notes)
	}
}
