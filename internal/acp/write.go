package acp

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

func (c *Conn) sendError(id json.RawMessage, e *Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	_ = c.send(&wireMessage{JSONRPC: "2.0", ID: id, hasID: true, Error: e}, nil)
}

// send encodes env with payload as params (requests, notifications) or
// result (responses) and queues the frame. Frames leave in queue order.
func (c *Conn) send(env *wireMessage, payload any) error {
	return c.enqueue(env, payload, nil)
}

func (c *Conn) enqueue(env *wireMessage, payload any, keep func() bool) error {
	b, pooled := fastFrame(env, payload, pooledFrame)
	var err error
	if !pooled {
		b, err = encodeFrame(env, payload)
	}
	if err != nil {
		c.log.Error("encode frame", "method", env.Method, "err", err)
		if env.Method == "" && env.Error == nil {
			b, _ = encodeFrame(&wireMessage{JSONRPC: "2.0", ID: env.ID, hasID: true,
				Error: &Error{Code: CodeInternalError, Message: "Internal error"}}, nil)
		} else {
			return err
		}
	}
	c.reserve(len(b))
	select {
	case c.out <- outFrame{b: b, note: !env.hasID, keep: keep, pooled: pooled}:
		return nil
	case <-c.writerDone:
		return ErrClosed
	}
}

// fastFrame writes the frame of a notification whose payload writes its
// own JSON (appender), in a buffer from alloc; ok is false when it does
// not (encodeFrame then uses encoding/json).
func fastFrame(env *wireMessage, payload any, alloc func(size int) []byte) (frame []byte, ok bool) {
	a, ok := payload.(appender)
	if !ok || env.Method == "" || env.hasID {
		return nil, false
	}
	frame = alloc(64 + len(env.Method) + a.jsonSize())
	frame = append(frame, `{"jsonrpc":"2.0","method":`...)
	frame = appendString(frame, env.Method)
	frame = append(frame, `,"params":`...)
	if frame, ok = a.appendJSON(frame); ok {
		return append(frame, "}\n"...), true
	}
	return nil, false
}

func encodeFrame(env *wireMessage, payload any) ([]byte, error) {
	if frame, ok := fastFrame(env, payload, newFrame); ok {
		return frame, nil
	}
	if n, ok := payload.(SessionNotification); ok {
		payload = n.plain()
	}
	var buf bytes.Buffer
	buf.Grow(256)
	buf.WriteString(`{"jsonrpc":"2.0"`)
	if env.hasID {
		buf.WriteString(`,"id":`)
		buf.Write(env.ID)
	}
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if env.Method != "" {
		buf.WriteString(`,"method":`)
		if err := enc.Encode(env.Method); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1)
		if payload != nil {
			buf.WriteString(`,"params":`)
			if err := enc.Encode(payload); err != nil {
				return nil, err
			}
			buf.Truncate(buf.Len() - 1)
		}
	} else if env.Error != nil {
		buf.WriteString(`,"error":`)
		if err := enc.Encode(env.Error); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1)
	} else {
		buf.WriteString(`,"result":`)
		if m, ok := payload.(compactMarshaler); ok {
			b, err := m.MarshalJSON()
			if err != nil {
				return nil, err
			}
			buf.Write(b)
		} else {
			if err := enc.Encode(payload); err != nil {
				return nil, err
			}
			buf.Truncate(buf.Len() - 1)
		}
	}
	buf.WriteString("}\n")
	frame := buf.Bytes()
	if !utf8.Valid(frame) {
		// The encoder fixes strings, but a json.RawMessage payload is copied
		// as is. Invalid bytes can only sit inside strings, so replacing them
		// keeps the JSON valid, and frames must be UTF-8.
		frame = bytes.ToValidUTF8(frame, []byte("\uFFFD"))
	}
	return frame, nil
}

// compactMarshaler is a result type whose MarshalJSON returns what
// json.Marshal made: compact, valid JSON with HTML characters escaped, the
// very bytes encoding/json would write after scanning and compacting it
// again. The frame takes them as they are: for the initialize answer that
// second pass was 280k of the 4.0 million instructions corvid ran from exec
// to the answer (callgrind).
type compactMarshaler interface {
	json.Marshaler
	compactJSON()
}

func (c *Conn) writeLoop() {
	defer close(c.writerDone)
	defer c.writerEnded()
	var batch bytes.Buffer
	var frames []outFrame // the frames of one write, for dropping notifications
	broken := false
	stop := false
	for !stop {
		f, ok := <-c.out
		if !ok || f.b == nil {
			break
		}
		c.takenRun(f)
		c.taken(f)
		frames = append(frames[:0], f)
		size := len(f.b)
		// Take whatever else is queued, so one barrier and one write serve
		// many frames.
	drain:
		for size < maxBatchBytes {
			select {
			case more := <-c.out:
				if more.b == nil {
					stop = true
					break drain
				}
				c.takenRun(more)
				c.taken(more)
				frames = append(frames, more)
				size += len(more.b)
			default:
				break drain
			}
		}
		if !broken {
			broken = !c.writeFrames(&batch, frames)
		}
		// Written or dropped: hold none of them while idle (a daemon
		// keeps thousands of idle connections; serve.md).
		recycle(frames)
		clear(frames)
	}
}

// writeFrames writes frames in one write, less the notifications that
// must not go out (BeforeWrite), and reports whether the output still
// works. A lone frame is written as it is; several are joined in batch.
func (c *Conn) writeFrames(batch *bytes.Buffer, frames []outFrame) bool {
	keep := func(outFrame) bool { return true }
	if c.opts.BeforeWrite != nil {
		if err := c.opts.BeforeWrite(); err != nil {
			// Only notifications that answer for themselves (keep:
			// their own event was stored) still go.
			keep = func(f outFrame) bool { return !f.note || (f.keep != nil && f.keep()) }
			c.log.Warn("notifications not sent: what they report could not be stored", "err", err)
		} else if slices.ContainsFunc(frames, dropped) {
			keep = func(f outFrame) bool { return !dropped(f) }
		}
	}
	var out []byte
	if len(frames) == 1 {
		if keep(frames[0]) {
			out = frames[0].b
		}
	} else {
		batch.Reset()
		for _, f := range frames {
			if keep(f) {
				batch.Write(f.b)
			}
		}
		out = batch.Bytes()
	}
	if len(out) == 0 {
		return true
	}
	if _, err := c.w.Write(out); err != nil {
		c.log.Warn("output broken; the client is gone", "err", err)
		c.markGone()
		return false
	}
	return true
}

// dropped reports whether f is a notification whose keep, asked now,
// says it must not go out.
func dropped(f outFrame) bool { return f.note && f.keep != nil && !f.keep() }

// maxBatchBytes bounds how much output one write carries.
const maxBatchBytes = 1 << 20
