package agent

import (
	"runtime"
	"strings"
	"testing"
)

// A long text goes on in blocks outside the heap (where the system maps
// them), comes back whole, and take unmaps every block.
func TestTextBufLongTextComesBackAndItsBlocksAreUnmapped(t *testing.T) {
	var b textBuf
	var want strings.Builder
	for i := 0; want.Len() < 3*farFrom+12345; i++ {
		s := strings.Repeat(string(rune('a'+i%26)), 1+i%4099)
		b.WriteString(s)
		want.WriteString(s)
	}
	huge := strings.Repeat("z", 2*farBlock+7) // one write over several blocks
	b.WriteString(huge)
	want.WriteString(huge)
	if b.Len() != want.Len() {
		t.Fatalf("Len %d, want %d", b.Len(), want.Len())
	}
	if b.far == nil {
		t.Fatal("no block outside the heap past farFrom")
	}
	f := b.far.blocks
	if runtime.GOOS != "windows" && len(f.maps) == 0 {
		t.Fatal("no block was mapped")
	}
	if got := b.take(); got != want.String() {
		t.Fatalf("take: %d bytes, want %d (or different text)", len(got), want.Len())
	}
	if len(f.maps) != 0 {
		t.Errorf("%d blocks still mapped after take", len(f.maps))
	}
	if b.Len() != 0 || b.far != nil || b.take() != "" {
		t.Error("take left the buffer non-empty")
	}
}

// A buffer reset without being taken (a stream that failed) unmaps its
// blocks too.
func TestTextBufResetUnmapsItsBlocks(t *testing.T) {
	var b textBuf
	b.WriteString(strings.Repeat("x", 2*farFrom))
	if b.far == nil {
		t.Fatal("no block outside the heap past farFrom")
	}
	f := b.far.blocks
	b.reset()
	if len(f.maps) != 0 {
		t.Errorf("%d blocks still mapped after reset", len(f.maps))
	}
}
