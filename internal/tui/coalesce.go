package tui

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Streamed text is merged on its way to the UI: consecutive chunks of one
// message (same session, kind and messageId, plain text and nothing else)
// that arrive while the UI is busy become one update, so that the model
// renders, and the event loop carries, one update per frame rather than
// one per chunk. Order is kept: a chunk is merged only into the newest
// queued update, and anything else ends the run.

// textChunk is a chunk update that holds only text: the fields it may
// have, and none other (decoding it refuses unknown fields, so a chunk
// carrying more, such as _meta or annotations, is passed on as it came).
type textChunk struct {
	SessionUpdate string `json:"sessionUpdate"`
	MessageID     string `json:"messageId,omitempty"`
	Content       struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// mergeable decodes raw as a text chunk; ok is false for any other update.
func mergeable(raw json.RawMessage) (c textChunk, ok bool) {
	if !bytes.Contains(raw, []byte(`_chunk"`)) {
		return c, false // not a chunk: skip the decoding
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if d.Decode(&c) != nil || d.More() || c.Content.Type != "text" {
		return c, false
	}
	switch c.SessionUpdate {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		return c, true
	}
	return c, false
}

// merged is a run of text chunks of one message queued as one update.
type merged struct {
	chunk textChunk // the first chunk: its kind, messageId and text
	text  []byte    // the run's text, once a second chunk joined it
	n     int       // how many chunks
}

// runMax is about the most text a run holds: a longer stretch of one
// message is queued as several runs. A run's buffer (reused from run to
// run, agent.runText) then stays small enough to stay in the processor's
// cache, and is not grown, copy after copy, to megabytes when the UI
// falls behind a long answer (issue 36). The UI renders the runs in
// order, as it would the chunks.
const runMax = 64 << 10

// full tells whether n more bytes would take the run past runMax.
func (r *merged) full(n int) bool {
	size := len(r.text)
	if r.n == 1 {
		size = len(r.chunk.Content.Text)
	}
	return size+n > runMax
}

// join appends c to the run if it continues it.
func (r *merged) join(c textChunk) bool {
	if c.SessionUpdate != r.chunk.SessionUpdate || c.MessageID != r.chunk.MessageID || r.full(len(c.Content.Text)) {
		return false
	}
	r.start()
	r.text = append(r.text, c.Content.Text...)
	r.n++
	return true
}

// joinQuick is join for a chunk read by scanChunk: it copies nothing but
// the text.
func (r *merged) joinQuick(q *quick) bool {
	if string(q.kind) != r.chunk.SessionUpdate || string(q.msgID) != r.chunk.MessageID || r.full(len(q.text)) {
		return false
	}
	r.start()
	text, ok := appendJSONString(r.text, q.text)
	if !ok {
		return false
	}
	r.text = text
	r.n++
	return true
}

// start puts the first chunk's text in the run's text, before a second
// chunk joins it.
func (r *merged) start() {
	if r.n == 1 {
		r.text = append(r.text[:0], r.chunk.Content.Text...)
	}
}

// update is the run as one session/update, decoded.
func (r *merged) update() *textChunk {
	c := r.chunk
	if r.n > 1 {
		c.Content.Text = string(r.text)
	}
	return &c
}

// quickChunk reads a session/update's params without a JSON decoder when
// they are a text chunk in the layout scanChunk reads.
func quickChunk(p []byte) (session string, c textChunk, ok bool) {
	q, ok := scanChunk(p)
	if !ok {
		return "", c, false
	}
	return q.chunk(nil)
}

// chunk decodes the text chunk scanChunk read: its session and the chunk.
// Text with escapes is decoded into *scratch (if not nil, kept there for
// the next chunk), then copied once into the chunk's text.
func (q *quick) chunk(scratch *[]byte) (session string, c textChunk, ok bool) {
	if t := q.text[1 : len(q.text)-1]; bytes.IndexByte(t, '\\') < 0 && utf8.Valid(t) {
		c.Content.Text = string(t) // no escape: one copy
	} else {
		var buf []byte
		if scratch != nil {
			buf = (*scratch)[:0]
		}
		text, ok := appendJSONString(buf, q.text)
		if scratch != nil {
			*scratch = text[:0]
		}
		if !ok {
			return "", c, false
		}
		c.Content.Text = string(text)
	}
	c.SessionUpdate, c.MessageID, c.Content.Type = chunkKind(q.kind), string(q.msgID), "text"
	return string(q.sid), c, true
}

// chunkKind is kind, one of the chunk kinds scanChunk takes, as a string
// not allocated again for each chunk.
func chunkKind(kind []byte) string {
	for _, k := range [...]string{"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"} {
		if string(kind) == k {
			return k
		}
	}
	return string(kind)
}

// quick is a text chunk's params as scanChunk reads them: views into
// them, nothing copied.
type quick struct {
	sid, kind, msgID []byte
	text             []byte // the JSON string, its quotes included
}

// scanChunk reads params that are a text chunk in the layout most agents
// (corvid among them) write, field for field:
//
//	{"sessionId":S,"update":{"sessionUpdate":K,"content":{"type":"text","text":T}[,"messageId":M]}}
//
// with S and M free of escapes. Anything else (another order, spaces,
// more fields) is not read here (ok false) and takes the decoder's way.
// The params were checked as JSON when the line was read.
func scanChunk(p []byte) (q quick, ok bool) {
	rest, ok := bytes.CutPrefix(p, []byte(`{"sessionId":"`))
	if !ok {
		return
	}
	if q.sid, rest, ok = plainString(rest); !ok {
		return
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"update":{"sessionUpdate":"`)); !ok {
		return
	}
	if q.kind, rest, ok = plainString(rest); !ok {
		return
	}
	switch string(q.kind) {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
	default:
		return q, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"content":{"type":"text","text":`)); !ok {
		return
	}
	end := stringEnd(rest)
	if end < 0 {
		return q, false
	}
	q.text, rest = rest[:end], rest[end:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`}`)); !ok {
		return
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"messageId":"`)); found {
		if q.msgID, rest, ok = plainString(r); !ok {
			return
		}
	}
	return q, bytes.Equal(rest, []byte(`}}`))
}

// appendJSONString appends the text of s, one JSON string with its
// quotes, to b, as the decoder reads it. Runs between escapes are copied
// whole rather than scanned byte by byte; a \u escape, or text that is not
// UTF-8 (which the decoder replaces), is left to the decoder.
func appendJSONString(b, s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return b, false
	}
	t, from := s[1:len(s)-1], len(b)
	for len(t) > 0 {
		e := bytes.IndexByte(t, '\\')
		if e < 0 {
			b, t = append(b, t...), nil
			break
		}
		if e+1 == len(t) {
			return b[:from], false
		}
		b = append(b, t[:e]...)
		switch c := t[e+1]; c {
		case '"', '\\', '/':
			b = append(b, c)
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		default: // \u: as the decoder reads it
			return decodeJSONString(b[:from], s)
		}
		t = t[e+2:]
	}
	if !utf8.Valid(b[from:]) {
		return decodeJSONString(b[:from], s)
	}
	return b, true
}

// decodeJSONString is appendJSONString by the JSON decoder.
func decodeJSONString(b, s []byte) ([]byte, bool) {
	var text string
	if json.Unmarshal(s, &text) != nil {
		return b, false
	}
	return append(b, text...), true
}

// plainString returns the rest of a JSON string up to its closing quote
// (the opening one read) and what follows it; ok is false when it holds
// an escape.
func plainString(b []byte) (s, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '"')
	if i < 0 || bytes.IndexByte(b[:i], '\\') >= 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

// stringEnd is the length of the JSON string at the start of b, its
// quotes included, or -1. It looks for quotes (bytes.IndexByte, many
// bytes at a time, rather than a loop over a chunk's 4 KiB) and takes
// the first one after an even run of backslashes.
func stringEnd(b []byte) int {
	if len(b) == 0 || b[0] != '"' {
		return -1
	}
	for i := 1; ; {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1
		}
		i += q
		bs := 0
		for bs < i-1 && b[i-1-bs] == '\\' {
			bs++
		}
		if bs%2 == 0 {
			return i + 1
		}
		i++
	}
}
