package acp

import "sync"

// A streamed answer's chunks are most of what a connection writes, each
// a frame of a few KiB written once and dropped. Their buffers are
// given back by the writer once written (the io.Writer contract: Write
// keeps nothing of p) and taken again for the next chunk, instead of
// allocating ~5 KB per 4 KiB chunk, which kept the GC (at 25 % while a
// long answer grows, internal/agent/textbuf.go) collecting: see
// BenchmarkNotifyTextChunk4K.

// frameBufs holds the buffers of written chunk frames (*[]byte, empty).
var frameBufs sync.Pool

// maxPooledFrame bounds the buffers kept: a chunk's frame is at most
// 64 KiB of text and its escapes, and the pool holds no more than that
// per buffer (a GC empties it).
const maxPooledFrame = 96 << 10

// pooledFrame returns an empty buffer of at least size bytes, from the
// pool when one there is large enough.
func pooledFrame(size int) []byte {
	if p, _ := frameBufs.Get().(*[]byte); p != nil && cap(*p) >= size {
		return (*p)[:0]
	}
	return make([]byte, 0, size)
}

// newFrame returns an empty buffer of size bytes of its own.
func newFrame(size int) []byte { return make([]byte, 0, size) }

// recycleFrame gives a written frame's buffer back.
func recycleFrame(b []byte) {
	if cap(b) <= maxPooledFrame {
		b = b[:0]
		frameBufs.Put(&b)
	}
}
