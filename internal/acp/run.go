package acp

import (
	"maps"
	"reflect"
	"slices"
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
	err  error
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
func (c *Conn) NewRun() *Run { return &Run{c: c} }

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
	if r.err != nil {
		return r.err
	}
	if !stringsOnly(meta) {
		return r.Notify("session/update", SessionNotification{SessionID: sessionID,
			Update: ContentChunk{SessionUpdate: kind, Content: TextBlock(text), MessageID: messageID, Meta: meta}})
	}
	var enc []byte
	if len(meta) > 0 {
		// A replayed turn tags its updates with one map: encode it once.
		if !sameMap(meta, r.meta.from) && !sameMeta(meta, r.meta.m) {
			r.meta = turnMeta{maps.Clone(meta), meta, appendStringMap(nil, meta)}
		}
		enc = r.meta.enc
	}
	r.buf = append(r.buf, `{"jsonrpc":"2.0","method":"session/update","params":`...)
	r.buf = appendTextChunk(r.buf, sessionID, kind, text, messageID, enc)
	r.buf = append(r.buf, "}\n"...)
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

// spill queues the buffer once it is full.
func (r *Run) spill() error {
	if len(r.buf) < runBytes {
		return nil
	}
	return r.Flush()
}

// Flush queues what the run holds.
func (r *Run) Flush() error {
	if r.err != nil || len(r.buf) == 0 {
		return r.err
	}
	b := r.buf
	r.buf = make([]byte, 0, runCap)
	select {
	case r.c.out <- outFrame{b: slices.Clip(b), note: true}:
		return nil
	case <-r.c.writerDone:
		r.err = ErrClosed
		return r.err
	}
}

// sameMap reports whether a and b are one map instance.
func sameMap(a, b Meta) bool {
	return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
