package agent

import (
	"runtime/debug"
	"strings"
)

// textBuf gathers a streamed block's text. A strings.Builder grows by
// copying the text into a larger array each time it is full, so a long
// answer leaves behind several times its size in garbage before the GC
// catches up (a 40 MiB answer peaked at 10× its size, issue 29). textBuf
// fills arrays of at most textBufBlock bytes instead and copies the text
// once, into a string of the exact size, when it is asked for: the text
// costs about twice its size at that moment and once afterwards.
type textBuf struct {
	full [][]byte // filled blocks, in order
	cur  []byte   // the block being filled
	n    int      // bytes written
}

// textBufBlock bounds one block; blocks start small (a short answer
// allocates about its size) and double up to it.
const textBufBlock = 64 << 10

func (t *textBuf) WriteString(s string) {
	t.n += len(s)
	for len(s) > 0 {
		if len(t.cur) == cap(t.cur) {
			if t.cur != nil {
				t.full = append(t.full, t.cur)
			}
			t.cur = make([]byte, 0, min(max(2*cap(t.cur), 256, len(s)), textBufBlock))
		}
		k := copy(t.cur[len(t.cur):cap(t.cur)], s)
		t.cur = t.cur[:len(t.cur)+k]
		s = s[k:]
	}
}

// Len is how many bytes were written.
func (t *textBuf) Len() int { return t.n }

// String returns the text written so far.
func (t *textBuf) String() string {
	if len(t.full) == 0 {
		return string(t.cur)
	}
	makeRoomFor(t.n)
	var b strings.Builder
	b.Grow(t.n)
	for _, blk := range t.full {
		b.Write(blk)
	}
	b.Write(t.cur)
	return b.String()
}

// hugeText is the size from which a copy of a text first returns the
// memory the GC can free to the OS.
const hugeText = 8 << 20

// makeRoomFor prepares a copy of n bytes. The resident set of a Go
// process grows to about twice its live heap between collections, and
// freed memory stays resident until the runtime returns it; a huge text's
// copy on top of that would peak at three or four times its size. Before
// one (rare: a model answer of many MiB), a collection that returns what
// it frees keeps the peak near the live text plus its copy. It costs one
// collection, a few ms for such a heap.
func makeRoomFor(n int) {
	if n >= hugeText {
		debug.FreeOSMemory()
	}
}
