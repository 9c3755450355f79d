package acpserver

import (
	"strings"
	"testing"
)

// lineBlocks keeps every block within maxTextBytes, cuts at a line end when
// one is in reach (Gas City ends a line at each block's end, so the text
// reads back the same), and sends no empty block (Gas City skips those).
func TestLineBlocksCutAtLineEndsWithinTheFrameLimit(t *testing.T) {
	line := strings.Repeat("x", 1000)
	var lines []string
	for range 200 { // about 200 KB
		lines = append(lines, line)
	}
	text := strings.Join(lines, "\n")
	blocks := lineBlocks(text)
	var got []string
	for _, b := range blocks {
		if len(b.Text) > maxTextBytes || b.Text == "" {
			t.Fatalf("block of %d bytes", len(b.Text))
		}
		got = append(got, strings.Split(b.Text, "\n")...)
	}
	if strings.Join(got, "\n") != text {
		t.Error("the blocks, read as Gas City reads them, do not give the text back")
	}
	long := strings.Repeat("é", maxTextBytes) // one line of 128 KiB
	var joined strings.Builder
	for _, b := range lineBlocks(long) {
		if len(b.Text) > maxTextBytes || !strings.HasPrefix(b.Text, "é") {
			t.Fatalf("a block of %d bytes, or cut inside a character", len(b.Text))
		}
		joined.WriteString(b.Text)
	}
	if joined.String() != long {
		t.Error("a line longer than a block is not kept whole across blocks")
	}
	if lineBlocks("") != nil {
		t.Error("no text must give no block")
	}
}
