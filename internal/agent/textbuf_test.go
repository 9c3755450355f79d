package agent

import (
	"runtime/debug"
	"strings"
	"testing"
)

// skipUnlessMapped skips a test of blocks outside the heap on a system
// where textBuf keeps them all in the heap.
func skipUnlessMapped(t *testing.T) {
	t.Helper()
	b := mapBlock(farBlock)
	if b == nil {
		t.Skip("no blocks outside the heap here")
	}
	unmapBlock(b)
}

// A long text goes on in blocks outside the heap (where the system maps
// them), comes back whole, and take unmaps every block.
func TestTextBufLongTextComesBackAndItsBlocksAreUnmapped(t *testing.T) {
	skipUnlessMapped(t)
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
	if len(f.maps) == 0 {
		t.Fatal("no block is mapped")
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
	skipUnlessMapped(t)
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

// The GC percent is lowered while a text grows outside the heap and put
// back once it is taken.
func TestTextBufPutsTheGCPercentBack(t *testing.T) {
	skipUnlessMapped(t)
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	var b textBuf
	b.WriteString(strings.Repeat("x", 2*farFrom))
	if got := debug.SetGCPercent(farGCPercent); got != farGCPercent {
		t.Errorf("GC percent %d while the text grows, want %d", got, farGCPercent)
	}
	b.take()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d after take, want 100 back", got)
	}
}

// BenchmarkTextBuf10MB gathers a 10 MB answer in 4 KiB chunks, as the
// assembler does while it streams, and takes it: the blocks past 1 MiB
// are mapped outside the heap, and each of their pages is first written
// here.
func BenchmarkTextBuf10MB(b *testing.B) {
	chunk := strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 41)[:4096]
	b.SetBytes(2500 * int64(len(chunk)))
	for b.Loop() {
		var t textBuf
		for range 2500 {
			t.WriteString(chunk)
		}
		if s := t.take(); len(s) != 2500*len(chunk) {
			b.Fatalf("took %d bytes", len(s))
		}
	}
}
