package agent

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"
)

// textBuf gathers a streamed block's text. A strings.Builder grows by
// copying the text into a larger array each time it is full, so a long
// answer leaves behind several times its size in garbage before the GC
// catches up (a 40 MiB answer peaked at 10× its size, issue 29). textBuf
// fills arrays of at most textBufBlock bytes instead and copies the text
// once, into a string of the exact size, when it is taken.
//
// Past farFrom bytes, blocks are mapped outside the Go heap (where the
// system allows; see textbuf_unix.go): the GC then paces the heap by what
// the process holds besides the answer instead of letting garbage grow to
// the answer's size between collections, and take unmaps each block once
// it is copied, so the blocks and the copy never both hold the whole text.
// While such a text grows, the GC percent is lowered (farGC) and the heap
// trimmed every farTrimEvery bytes. A long answer then costs its size
// plus a fixed ~30 MiB (the bounded queues and the store) while it
// streams and while it is copied (issue 29: budget 2× its size). Mapped
// blocks are not counted by GOMEMLIMIT.
type textBuf struct {
	full [][]byte // filled blocks, in order
	cur  []byte   // the block being filled
	n    int      // bytes written
	far  *farRef  // the blocks outside the Go heap (nil: none yet)
}

// textBufBlock bounds one block in the heap; blocks start small (a short
// answer allocates about its size) and double up to it.
const textBufBlock = 64 << 10

// farFrom is the size from which blocks are mapped outside the Go heap,
// farBlock bytes each (pages are resident only once written).
const (
	farFrom  = 1 << 20
	farBlock = 1 << 20
)

func (t *textBuf) WriteString(s string) {
	t.n += len(s)
	for len(s) > 0 {
		if len(t.cur) == cap(t.cur) {
			if t.cur != nil {
				t.full = append(t.full, t.cur)
			}
			t.cur = t.newBlock(len(s))
		}
		k := copy(t.cur[len(t.cur):cap(t.cur)], s)
		t.cur = t.cur[:len(t.cur)+k]
		s = s[k:]
	}
}

// newBlock returns an empty block for a text that has want bytes more.
func (t *textBuf) newBlock(want int) []byte {
	if t.n >= farFrom {
		if b := mapBlock(farBlock); b != nil {
			if t.far == nil {
				t.far = newFarRef()
			}
			t.far.blocks.add(b)
			if t.n-t.far.trimmed >= farTrimEvery {
				t.far.trimmed = t.n
				debug.FreeOSMemory()
			}
			return b[:0]
		}
	}
	return make([]byte, 0, min(max(2*cap(t.cur), 256, want), textBufBlock))
}

// farTrimEvery is how often, in bytes of text, a growing text outside
// the heap has the heap collected and its free memory returned. While a
// long answer streams, the heap holds only the bounded queues of frames
// and rows, but the runtime keeps what it freed resident for minutes. A
// trim per 8 MiB (one collection of that small heap), with the trim
// before the copy and rowsPerGC at 2 MiB, took a 40 MiB answer's peak
// down by about 3 MiB on average over 5 runs.
const farTrimEvery = 8 << 20

// Len is how many bytes were written.
func (t *textBuf) Len() int { return t.n }

// take returns the text written and empties the buffer, unmapping each
// block outside the heap as soon as it is copied.
func (t *textBuf) take() string {
	defer t.reset()
	if len(t.full) == 0 {
		return string(t.cur)
	}
	makeRoomFor(t.n)
	var b strings.Builder
	b.Grow(t.n)
	for i, blk := range t.full {
		b.Write(blk)
		t.full[i] = nil
		t.far.dropFirst(blk)
	}
	b.Write(t.cur)
	return b.String()
}

// reset empties the buffer and unmaps what is left of its blocks.
func (t *textBuf) reset() {
	if t.far != nil {
		t.far.blocks.free()
	}
	*t = textBuf{}
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

// farRef holds a textBuf's blocks outside the heap; should a textBuf be
// dropped without take or reset (a panic mid-stream), a cleanup unmaps its
// blocks once the farRef is unreachable.
type farRef struct {
	blocks  *farBlocks
	trimmed int // the text's size at the last trim of the heap
}

func newFarRef() *farRef {
	r := &farRef{blocks: &farBlocks{}}
	farGCStart()
	runtime.AddCleanup(r, (*farBlocks).free, r.blocks)
	return r
}

// dropFirst unmaps blk if it is the oldest block still mapped (blocks are
// copied in the order they were mapped).
func (r *farRef) dropFirst(blk []byte) {
	if r == nil || cap(blk) == 0 {
		return
	}
	f := r.blocks
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.maps) > 0 && unsafe.SliceData(f.maps[0]) == unsafe.SliceData(blk) {
		unmapBlock(f.maps[0])
		f.maps[0] = nil
		f.maps = f.maps[1:]
	}
}

// farBlocks are the mappings of a textBuf's blocks outside the heap,
// oldest first, each whole.
type farBlocks struct {
	mu    sync.Mutex // the cleanup runs on a goroutine of its own
	maps  [][]byte
	ended bool // free ran (farGCEnd was called)
}

// add keeps a block mapBlock gave, whole.
func (f *farBlocks) add(b []byte) {
	f.mu.Lock()
	f.maps = append(f.maps, b)
	f.mu.Unlock()
}

// free unmaps every block left.
func (f *farBlocks) free() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.maps {
		unmapBlock(b)
	}
	f.maps = nil
	if !f.ended {
		f.ended = true
		farGCEnd()
	}
}

// farGC lowers the GC percent (process-wide) while any text grows
// outside the heap. The heap then holds only the bounded queues of
// frames and rows, about 10 MiB, and at the default 100 the runtime lets
// it reach twice that, more on a loaded machine where the collector lags.
// At 25, a 40 MiB answer peaked at 1.71–1.80× its size above idle in 6
// runs (1.74–2.04× at 100), for more CPU time (docs/status.md). Lowering
// it while the answer was in the heap did not help: the heap's goal then
// grew with the answer.
var farGC struct {
	mu   sync.Mutex
	n    int // texts outside the heap not yet taken or reset
	prev int // the GC percent before the first
}

// farGCPercent is the GC percent while a text grows outside the heap.
const farGCPercent = 25

func farGCStart() {
	farGC.mu.Lock()
	defer farGC.mu.Unlock()
	if farGC.n++; farGC.n == 1 {
		farGC.prev = debug.SetGCPercent(farGCPercent)
		if farGC.prev < farGCPercent { // lower already, or off (-1)
			debug.SetGCPercent(farGC.prev)
		}
	}
}

func farGCEnd() {
	farGC.mu.Lock()
	defer farGC.mu.Unlock()
	if farGC.n--; farGC.n == 0 {
		debug.SetGCPercent(farGC.prev)
	}
}
