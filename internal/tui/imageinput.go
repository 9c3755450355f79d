package tui

import (
	"fmt"
	"strings"
)

// imageMark is the rune before those that stand for the clipboard's
// images in the input: imageMark+N is image N, drawn as its placeholder
// ([image 1: 42 KB png]) and sent as [image N] beside its image block.
// One rune each, so the cursor steps over a placeholder whole, and
// Backspace or Delete removes it, and its image with it. They are in
// Supplementary Private Use Area-B, which no font or input method uses;
// text typed or pasted has them taken out (insert), so no typing makes
// one.
const imageMark rune = 0x100000

func isImageMark(r rune) bool { return r > imageMark && r <= 0x10FFFD }

func dropImageMarks(s string) string {
	if !strings.ContainsFunc(s, isImageMark) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isImageMark(r) {
			return -1
		}
		return r
	}, s)
}

// attachImage puts the image in at the cursor, as its placeholder.
func (in *input) attachImage(img clipImage) {
	in.images = append(in.images, img)
	in.putRunes([]rune{imageMark + rune(len(in.images))})
}

// image is the attached image a rune stands for.
func (in *input) image(r rune) (clipImage, int, bool) {
	n := int(r - imageMark)
	if !isImageMark(r) || n > len(in.images) {
		return clipImage{}, 0, false
	}
	return in.images[n-1], n, true
}

// imageLabel is the placeholder drawn for r, when it stands for an image.
func (in *input) imageLabel(r rune) (string, bool) {
	img, n, ok := in.image(r)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("[image %d: %s %s]", n, byteSize(len(img.data)), strings.TrimPrefix(img.mime, "image/")), true
}

// byteSize writes n bytes as KB (rounded up) or MB.
func byteSize(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KB", (n+1023)/1024)
}

// plain is the input's text with each image's placeholder as [image N].
func (in *input) plain() string {
	if len(in.images) == 0 {
		return in.text()
	}
	var b strings.Builder
	for _, r := range in.buf {
		if _, n, ok := in.image(r); ok {
			fmt.Fprintf(&b, "[image %d]", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// attached are the images whose placeholders are in the input, in the
// order they stand there; an image whose placeholder was deleted is not
// among them.
func (in *input) attached() []clipImage {
	var out []clipImage
	seen := map[int]bool{}
	for _, r := range in.buf {
		if img, n, ok := in.image(r); ok && !seen[n] {
			seen[n] = true
			out = append(out, img)
		}
	}
	return out
}

// editable is the input for $EDITOR: placeholders as [image N], which
// relink turns back into theirs when the editor has saved.
func (in *input) editable() string { return in.plain() }

// relink puts back the placeholder of each attached image whose
// [image N] is in the input (after the editor).
func (in *input) relink() {
	if len(in.images) == 0 {
		return
	}
	s := string(in.buf)
	for n := 1; n <= len(in.images); n++ {
		s = strings.ReplaceAll(s, fmt.Sprintf("[image %d]", n), string(imageMark+rune(n)))
	}
	in.set(s)
}
