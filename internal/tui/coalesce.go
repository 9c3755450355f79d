package tui

import (
	"bytes"
	"encoding/json"
	"strings"
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
	chunk textChunk       // the first chunk: its kind, messageId and text
	text  strings.Builder // the run's text, from its second chunk on
	n     int             // how many chunks
}

// join appends c to the run if it continues it.
func (r *merged) join(c textChunk) bool {
	if c.SessionUpdate != r.chunk.SessionUpdate || c.MessageID != r.chunk.MessageID {
		return false
	}
	if r.n == 1 {
		r.text.WriteString(r.chunk.Content.Text)
	}
	r.text.WriteString(c.Content.Text)
	r.n++
	return true
}

// update is the run as one session/update, decoded (its text not copied
// again: the builder's).
func (r *merged) update() *textChunk {
	c := r.chunk
	if r.n > 1 {
		c.Content.Text = r.text.String()
	}
	return &c
}

// quickChunk reads a session/update's params without a JSON decoder when
// they are a text chunk in the layout most agents (corvid among them)
// write, field for field:
//
//	{"sessionId":S,"update":{"sessionUpdate":K,"content":{"type":"text","text":T}[,"messageId":M]}}
//
// with S and M free of escapes. Anything else (another order, spaces,
// more fields) is not read here (ok false) and takes the decoder's way.
// The params were checked as JSON when the line was read.
func quickChunk(p []byte) (session string, c textChunk, ok bool) {
	rest, ok := bytes.CutPrefix(p, []byte(`{"sessionId":"`))
	if !ok {
		return
	}
	var sid []byte
	if sid, rest, ok = plainString(rest); !ok {
		return
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"update":{"sessionUpdate":"`)); !ok {
		return
	}
	var kind []byte
	if kind, rest, ok = plainString(rest); !ok {
		return
	}
	switch string(kind) {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
	default:
		return "", c, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"content":{"type":"text","text":`)); !ok {
		return
	}
	text, n, quick := jsonString(rest)
	if !quick { // a \u escape, or not UTF-8: as the decoder reads it
		n = stringEnd(rest)
		if n < 0 || json.Unmarshal(rest[:n], &text) != nil {
			return "", c, false
		}
	}
	if rest, ok = bytes.CutPrefix(rest[n:], []byte(`}`)); !ok {
		return
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"messageId":"`)); found {
		var id []byte
		if id, rest, ok = plainString(r); !ok {
			return
		}
		c.MessageID = string(id)
	}
	if !bytes.Equal(rest, []byte(`}}`)) {
		return "", c, false
	}
	c.SessionUpdate, c.Content.Type, c.Content.Text = string(kind), "text", text
	return string(sid), c, true
}

// jsonString decodes the JSON string at the start of b (from its opening
// quote): its text and its length in b, found a run at a time rather than
// by the decoder's byte-by-byte scan. ok is false for a \u escape or text
// that is not UTF-8 (the decoder replaces what is not), which it leaves
// to the decoder. b is valid JSON.
func jsonString(b []byte) (s string, n int, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", 0, false
	}
	var out []byte
	i := 1
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return "", 0, false
		}
		e := bytes.IndexByte(b[i:i+q], '\\')
		if e < 0 {
			if out == nil { // no escape at all: one copy
				if !utf8.Valid(b[i : i+q]) {
					return "", 0, false
				}
				return string(b[i : i+q]), i + q + 1, true
			}
			out = append(out, b[i:i+q]...)
			i += q + 1
			break
		}
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, b[i:i+e]...)
		i += e + 1
		if i == len(b) {
			return "", 0, false
		}
		switch c := b[i]; c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		default:
			return "", 0, false
		}
		i++
	}
	if !utf8.Valid(out) {
		return "", 0, false
	}
	return string(out), i, true
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
// quotes included, or -1.
func stringEnd(b []byte) int {
	if len(b) == 0 || b[0] != '"' {
		return -1
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
