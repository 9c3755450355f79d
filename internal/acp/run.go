package acp

import (
	"encoding/json"
	"maps"
	"reflect"
	"sync"
)

// A Run sends a long series of notifications, such as a session's replay,
// with less work per frame than Notify: frames are encoded into shared
// buffers and queued a buffer at a time (one queue operation and one
// allocation per runBytes of output, not per frame). Frames leave in the
// order they were added, the last ones once Flush is called, so whatever
// is sent after Flush follows them. A Run is not safe for concurrent use;
// notifications sent meanwhile through Notify may go out between its
// buffers.
type Run struct {
	c    *Conn
	buf  []byte
	meta turnMeta // the last _meta map a text chunk had, encoded
	// The frame of a text chunk before its text (it depends on the
	// session and kind only) and after it (message id and _meta), as
	// the last few chunks had them: a replay alternates between a few.
	heads, tails []piece
	full         [][]byte // full buffers set aside (spill)
	err          error
}

// piece is a cached part of a frame: the bytes for a, b and m.
type piece struct {
	a, b  string
	m     Meta // by instance (nil: none)
	bytes []byte
}

// maxPieces bounds each of a Run's caches.
const maxPieces = 4

// find returns the cached bytes for a, b and m, if any.
func find(ps []piece, a, b string, m Meta) ([]byte, bool) {
	for i := range ps {
		p := &ps[i]
		if p.a == a && p.b == b && (sameMap(m, p.m) || len(m) == 0 && p.m == nil) {
			return p.bytes, true
		}
	}
	return nil, false
}

// keep caches p, in place of the oldest piece once the cache is full.
func keep(ps []piece, p piece) []piece {
	if len(ps) == maxPieces {
		copy(ps, ps[1:])
		ps = ps[:maxPieces-1]
	}
	return append(ps, p)
}

// runBytes is about how much output a Run buffers before queueing it;
// runCap, the capacity of its buffers, is the largest size Go allocates
// as a small object (a larger one is zeroed and mapped afresh each time).
const (
	runBytes = 28 << 10
	runCap   = 32 << 10
)

type turnMeta struct {
	m    Meta // a copy of the map encoded
	from Meta // the map itself: the caller does not change it (see TextChunk)
	enc  []byte
}

// NewRun starts a run of notifications on c.
func (c *Conn) NewRun() *Run {
	return &Run{c: c, buf: (*runBufs.Get().(*[]byte))[:0]}
}

// runBufs are the buffers of runs, given back by the writer once written.
var runBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, runCap)
	return &b
}}

// recycle gives the run buffers, and the chunk frames' (framebufs.go),
// among frames back.
func recycle(frames []outFrame) {
	for _, f := range frames {
		if f.reuse && cap(f.b) <= 2*runCap {
			b := f.b[:0]
			runBufs.Put(&b)
		} else if f.pooled {
			recycleFrame(f.b)
		}
	}
}

// Notify adds a notification, as Conn.Notify sends it.
func (r *Run) Notify(method string, params any) error {
	if r.err != nil {
		return r.err
	}
	b, err := encodeFrame(&wireMessage{JSONRPC: "2.0", Method: method}, params)
	if err != nil {
		r.c.log.Error("encode frame", "method", method, "err", err)
		return err
	}
	r.buf = append(r.buf, b...)
	return r.spill()
}

// TextChunk adds the session/update of a text chunk: the frame Notify
// sends for SessionNotification{SessionID: sessionID, Update:
// ContentChunk{SessionUpdate: kind, Content: TextBlock(text), MessageID:
// messageID, Meta: meta}}, byte for byte. A chunk whose meta is not all
// strings is sent through Notify. The run may keep meta until Flush: the
// caller must not change it meanwhile.
func (r *Run) TextChunk(sessionID, kind, text, messageID string, meta Meta) error {
	return r.textChunk(sessionID, kind, text, false, messageID, meta)
}

// TextChunkJSON is TextChunk for a text given as the contents of a JSON
// string (without its quotes) exactly as json.Marshal writes that text:
// escaped is copied into the frame as it is. The caller vouches for the
// form; a frame with escaped bytes json.Marshal would not write for the
// text they stand for differs from the frame TextChunk writes.
func (r *Run) TextChunkJSON(sessionID, kind, escaped, messageID string, meta Meta) error {
	return r.textChunk(sessionID, kind, escaped, true, messageID, meta)
}

func (r *Run) textChunk(sessionID, kind, text string, escaped bool, messageID string, meta Meta) error {
	if r.err != nil {
		return r.err
	}
	if len(meta) > 0 && !sameMap(meta, r.meta.from) {
		if !stringsOnly(meta) {
			if escaped {
				var s string
				if err := json.Unmarshal([]byte(`"`+text+`"`), &s); err != nil {
					return err
				}
				text = s
			}
			return r.Notify("session/update", SessionNotification{SessionID: sessionID,
				Update: ContentChunk{SessionUpdate: kind, Content: TextBlock(text), MessageID: messageID, Meta: meta}})
		}
		// A replayed turn tags its updates with one map: encode it once.
		if !sameMeta(meta, r.meta.m) {
			r.meta = turnMeta{maps.Clone(meta), meta, appendStringMap(nil, meta)}
		}
		r.meta.from = meta
	}
	head, ok := find(r.heads, sessionID, kind, nil)
	if !ok {
		head = []byte(`{"jsonrpc":"2.0","method":"session/update","params":`)
		head = appendTextChunkHead(head, sessionID, kind)
		r.heads = keep(r.heads, piece{a: sessionID, b: kind, bytes: head})
	}
	tail, ok := find(r.tails, messageID, "", meta)
	if !ok {
		var enc []byte
		p := piece{a: messageID}
		if len(meta) > 0 {
			enc, p.m = r.meta.enc, meta
		}
		p.bytes = append(appendTextChunkTail(nil, messageID, enc), "}\n"...)
		r.tails = keep(r.tails, p)
		tail = p.bytes
	}
	r.buf = append(r.buf, head...)
	// ContentBlock.MarshalJSON uses json.Marshal, which escapes <, > and &.
	if escaped {
		r.buf = append(append(append(r.buf, '"'), text...), '"')
	} else {
		r.buf = appendStringHTML(r.buf, text, true)
	}
	r.buf = append(r.buf, tail...)
	return r.spill()
}

// sameMeta reports whether a and b hold the same keys and values (strings).
func sameMeta(a, b Meta) bool {
	if len(a) != len(b) || b == nil {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// spill sets the buffer aside once it is full, and queues the buffers set
// aside once there are runGroup of them: the writer, woken for the first,
// takes them all at once.
func (r *Run) spill() error {
	if len(r.buf) < runBytes {
		return nil
	}
	r.full = append(r.full, r.buf)
	r.buf = (*runBufs.Get().(*[]byte))[:0]
	if len(r.full) < runGroup {
		return nil
	}
	return r.queue()
}

// Flush queues what the run holds.
func (r *Run) Flush() error {
	if r.err == nil && len(r.buf) > 0 {
		r.full = append(r.full, r.buf)
		r.buf = (*runBufs.Get().(*[]byte))[:0]
	}
	return r.queue()
}

// queue hands the buffers set aside to the writer.
func (r *Run) queue() error {
	for i, b := range r.full {
		if r.err != nil {
			break
		}
		r.full[i] = nil
		select {
		case r.c.runSlots <- struct{}{}:
		case <-r.c.writerDone:
			r.err = ErrClosed
			continue
		}
		select {
		case r.c.out <- outFrame{b: b, note: true, reuse: true}:
		case <-r.c.writerDone:
			r.err = ErrClosed
		}
	}
	r.full = r.full[:0]
	return r.err
}

// maxRunBufs bounds the Run buffers queued for the writer (runBytes
// each), and runGroup those a Run sets aside before it queues them: what
// a replay holds beyond its fold while the client reads is at most
// maxRunBufs+runGroup buffers.
const (
	maxRunBufs = 8
	runGroup   = 4
)

// takenRun frees the slot of a Run buffer the writer has taken.
func (c *Conn) takenRun(f outFrame) {
	if f.reuse {
		<-c.runSlots
	}
}

// sameMap reports whether a and b are one map instance.
func sameMap(a, b Meta) bool {
	return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
