package tui

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corvid-agent/corvid/internal/acp"
)

// promptCaps is what the agent's initialize said its prompts may carry
// (agentCapabilities.promptCapabilities).
type promptCaps struct {
	Image           bool `json:"image"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// maxImageBytes bounds an image file sent as an image block.
const maxImageBytes = 8 << 20

// maxRangeBytes bounds the lines of an @path#a-b range sent embedded.
const maxRangeBytes = 256 << 10

// imageTypes are the image files a prompt attaches, by extension.
func imageType(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	}
	return ""
}

// attachments are the content blocks a prompt's text names beside the
// text itself, and notes for the user:
//   - @path: a resource link to the file;
//   - @path#20-45 (or #20, #L20-45): an embedded resource holding those
//     lines (the agent must offer embeddedContext; else the whole file's
//     link, the range left in the text);
//   - @path of an image, or an image file's path as a word of its own (a
//     terminal pastes a dropped file so): an image block when the agent
//     takes images, else a note that it does not (the path stays text).
func attachments(text, dir string, caps promptCaps) ([]acp.ContentBlock, []string) {
	var out []acp.ContentBlock
	var notes []string
	seen := map[string]bool{}
	for _, w := range promptWords(text) { // words.go: quoting and \ escapes taken off
		for _, cand := range wordNames(w) {
			b, note, ok := wordAttachment(cand, dir, caps, seen)
			if !ok {
				continue
			}
			if b != nil {
				out = append(out, *b)
			}
			if note != "" {
				notes = append(notes, note)
			}
			break
		}
	}
	return out, notes
}

// wordNames are the names a word may stand for: unquoted, then as typed
// (a file whose own name holds a backslash or a quote).
func wordNames(w promptWord) []string {
	names := []string{w.name}
	if raw := strings.Trim(w.raw, `'"`); raw != w.name {
		names = append(names, raw)
	}
	return names
}

// wordAttachment is the block for one word that names a file (an @path,
// or an image's path), a note, and whether the word named one.
func wordAttachment(w, dir string, caps promptCaps, seen map[string]bool) (*acp.ContentBlock, string, bool) {
	p, at := strings.CutPrefix(w, "@")
	if p == "" || seen[p] {
		return nil, "", false
	}
	name, lines := p, ""
	if at {
		name, lines = splitRange(p, dir)
	}
	if !at && imageType(name) == "" {
		return nil, "", false
	}
	abs := localPath(name, dir)
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() {
		return nil, "", false
	}
	seen[p] = true
	b, note := attachment(abs, name, lines, st.Size(), caps)
	return b, note, true
}

// splitRange splits @path#20-45 into the path and the range; a file
// whose own name holds the # is taken whole.
func splitRange(p, dir string) (string, string) {
	name, lines, ok := strings.Cut(p, "#")
	if !ok {
		return p, ""
	}
	if _, err := os.Stat(localPath(name, dir)); err != nil {
		if _, err := os.Stat(localPath(p, dir)); err == nil {
			return p, ""
		}
	}
	return name, lines
}

// localPath is p as an absolute path: ~/ is the home directory, a
// relative path is under dir.
func localPath(p, dir string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

func fileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// attachment is the block for one named file, or a note why there is
// none.
func attachment(abs, name, lines string, size int64, caps promptCaps) (*acp.ContentBlock, string) {
	link := &acp.ContentBlock{Type: "resource_link", URI: fileURI(abs), Name: filepath.Base(name), Title: name}
	if imageType(name) != "" {
		if !caps.Image {
			return nil, fmt.Sprintf("the model takes no images: %s is sent as its path, in the text", name)
		}
		if size > maxImageBytes {
			return nil, imageFileNote(name, errTooLarge)
		}
		data, mime, err := readImageFile(abs) // image.go: the bytes say the type
		if err != nil {
			return nil, imageFileNote(name, err)
		}
		b := imageBlock(data, mime)
		return &b, ""
	}
	if lines == "" {
		return link, ""
	}
	from, to, ok := lineRange(lines)
	if !ok {
		return link, fmt.Sprintf("@%s#%s: a range is #20-45 or #20; the whole file is linked", name, lines)
	}
	if !caps.EmbeddedContext {
		return link, fmt.Sprintf("the agent takes no embedded files: all of %s is linked, the range is in the text", name)
	}
	text, err := readLines(abs, from, to)
	if err != nil {
		return link, fmt.Sprintf("%s: %v; the whole file is linked", name, err)
	}
	uri := fmt.Sprintf("%s#L%d-%d", fileURI(abs), from, to)
	return &acp.ContentBlock{Type: "resource", Resource: &acp.EmbeddedResource{URI: uri, MimeType: "text/plain", Text: &text}}, ""
}

// lineRange reads "20-45", "L20-L45", "20" (one line) as 1-based lines.
func lineRange(s string) (int, int, bool) {
	a, b, dash := strings.Cut(s, "-")
	from, err1 := strconv.Atoi(strings.TrimPrefix(a, "L"))
	to := from
	var err2 error
	if dash {
		to, err2 = strconv.Atoi(strings.TrimPrefix(b, "L"))
	}
	if err1 != nil || err2 != nil || from < 1 || to < from {
		return 0, 0, false
	}
	return from, to, true
}

// readLines is lines from..to of the file (fewer where it ends sooner).
func readLines(path string, from, to int) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	all := strings.SplitAfter(string(data), "\n")
	if from > len(all) || (from == len(all) && all[from-1] == "") {
		return "", fmt.Errorf("the file has %d lines", strings.Count(string(data), "\n"))
	}
	text := strings.Join(all[from-1:min(to, len(all))], "")
	if len(text) > maxRangeBytes {
		return "", fmt.Errorf("lines %d-%d are over %d KB", from, to, maxRangeBytes>>10)
	}
	return strings.TrimSuffix(text, "\n"), nil
}

func (a *agent) setPromptCaps(c promptCaps) { a.caps = c }

func (a *agent) promptCaps() promptCaps {
	a.initMu.Lock()
	defer a.initMu.Unlock()
	return a.caps
}

// promptBlocks are the text, the clipboard's images attached to it and
// what it names (attachments); the notes are printed above the prompt.
func (m *model) promptBlocks(text string, imgs []clipImage) []acp.ContentBlock {
	var caps promptCaps
	if m.ag != nil {
		caps = m.ag.promptCaps()
	}
	blocks := []acp.ContentBlock{acp.TextBlock(text)}
	var notes []string
	if len(imgs) > 0 && !caps.Image { // attached before initialize answered, or before a reconnection
		notes = append(notes, "the model takes no images: the clipboard's images are not sent")
		imgs = nil
	}
	for _, img := range imgs {
		blocks = append(blocks, imageBlock(img.data, img.mime))
	}
	more, named := attachments(text, m.opts.Cwd, caps)
	for _, n := range append(notes, named...) {
		m.printLines(m.th.warn.Render("! " + n))
	}
	return append(blocks, more...)
}
