package acp

import (
	"slices"

	"github.com/corvid-agent/corvid/internal/jsonstring"
)

// Most frames of a streamed turn are one text chunk. They are written by
// hand here instead of by encoding/json's reflection, which (with
// ContentBlock's MarshalJSON and the compaction of its output) cost about
// a third of the agent's CPU per chunk. The bytes are exactly what
// encoding/json writes for the same value (TestAppendFrameMatchesEncodingJSON
// holds them to it), so the fast path is invisible to a client.

// appender is a payload that can write its JSON itself; ok is false when
// it cannot (the caller then uses encoding/json).
type appender interface {
	appendJSON(dst []byte) (out []byte, ok bool)
	// jsonSize is about the size appendJSON writes, a little more
	// rather than less: the frame is then allocated once, not grown
	// (and copied) about log2(size/256) times.
	jsonSize() int
}

// WireTextChunk is a text chunk's update (Chunk, whose Content is a text
// block without annotations or _meta) given with its text in wire form:
// TextJSON is what json.Marshal writes for Chunk.Content.Text, without
// the quotes (the agent escaped it once already, for the chunk's stored
// row). Its frame copies TextJSON instead of escaping the text again; it
// is otherwise the frame of SessionNotification{Update: Chunk}, byte for
// byte (TestWireTextChunkFrameIsTheChunksFrame).
type WireTextChunk struct {
	Chunk    ContentChunk
	TextJSON string
}

// plain is n with a WireTextChunk update replaced by its chunk, for
// encoding/json.
func (n SessionNotification) plain() SessionNotification {
	if w, ok := n.Update.(WireTextChunk); ok {
		n.Update = w.Chunk
	}
	return n
}

// jsonSize allows for the escapes of a text with a newline every 64 bytes
// or so; a text with more grows the frame once more.
func (n SessionNotification) jsonSize() int {
	c, ok := n.Update.(ContentChunk)
	if w, wire := n.Update.(WireTextChunk); wire {
		c, ok = w.Chunk, true
		c.Content.Text = w.TextJSON
	}
	if !ok {
		return 0
	}
	size := 128 + len(n.SessionID) + len(c.SessionUpdate) + len(c.MessageID) + len(c.Content.Text) + len(c.Content.Text)/64
	for k, v := range c.Meta {
		if v, ok := v.(string); ok {
			size += 8 + len(k) + len(v)
		}
	}
	return size
}

// appendJSON writes a text chunk notification whose _meta, if any, holds
// strings only.
func (n SessionNotification) appendJSON(dst []byte) ([]byte, bool) {
	c, ok := n.Update.(ContentChunk)
	w, wire := n.Update.(WireTextChunk)
	if wire {
		c, ok = w.Chunk, true
	}
	if !ok || !stringsOnly(c.Meta) || c.Content.Type != "text" || c.Content.Annotations != nil || c.Content.Meta != nil {
		return dst, false
	}
	var meta []byte
	if len(c.Meta) > 0 {
		meta = appendStringMap(nil, c.Meta)
	}
	if wire {
		dst = appendTextChunkHead(dst, n.SessionID, c.SessionUpdate)
		dst = append(dst, '"')
		dst = append(dst, w.TextJSON...)
		dst = append(dst, '"')
		return appendTextChunkTail(dst, c.MessageID, meta), true
	}
	return appendTextChunk(dst, n.SessionID, c.SessionUpdate, c.Content.Text, c.MessageID, meta), true
}

// appendTextChunk writes the params of a text chunk's session/update;
// meta is its _meta as JSON (nil: none).
func appendTextChunk(dst []byte, sessionID, kind, text, messageID string, meta []byte) []byte {
	dst = appendTextChunkHead(dst, sessionID, kind)
	// ContentBlock.MarshalJSON uses json.Marshal, which escapes <, > and &.
	dst = appendStringHTML(dst, text, true)
	return appendTextChunkTail(dst, messageID, meta)
}

// appendTextChunkHead writes what comes before a text chunk's text.
func appendTextChunkHead(dst []byte, sessionID, kind string) []byte {
	dst = append(dst, `{"sessionId":`...)
	dst = appendString(dst, sessionID)
	dst = append(dst, `,"update":{"sessionUpdate":`...)
	dst = appendString(dst, kind)
	return append(dst, `,"content":{"type":"text","text":`...)
}

// appendTextChunkTail writes what comes after a text chunk's text.
func appendTextChunkTail(dst []byte, messageID string, meta []byte) []byte {
	dst = append(dst, '}')
	if messageID != "" {
		dst = append(dst, `,"messageId":`...)
		dst = appendString(dst, messageID)
	}
	if meta != nil {
		dst = append(dst, `,"_meta":`...)
		dst = append(dst, meta...)
	}
	return append(dst, "}}"...)
}

// stringsOnly reports whether every value of m is a string (a turn id).
func stringsOnly(m Meta) bool {
	for _, v := range m {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}

// appendStringMap writes a map of strings as encoding/json does: keys
// sorted.
func appendStringMap(dst []byte, m Meta) []byte {
	if len(m) == 1 { // the usual case: no keys to sort
		for k, v := range m {
			dst = append(dst, '{')
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, v.(string))
		}
		return append(dst, '}')
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, m[k].(string))
	}
	return append(dst, '}')
}

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping off (jsonstring.Append).
func appendString(dst []byte, s string) []byte { return jsonstring.Append(dst, s, false) }

// appendStringHTML is appendString that, when html is set, also escapes
// <, > and & as json.Marshal does by default.
func appendStringHTML(dst []byte, s string, html bool) []byte { return jsonstring.Append(dst, s, html) }
