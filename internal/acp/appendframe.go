package acp

import (
	"slices"
	"unicode/utf8"
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

// jsonSize allows for the escapes of a text with a newline every 64 bytes
// or so; a text with more grows the frame once more.
func (n SessionNotification) jsonSize() int {
	c, ok := n.Update.(ContentChunk)
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
	if !ok || !stringsOnly(c.Meta) || c.Content.Type != "text" || c.Content.Annotations != nil || c.Content.Meta != nil {
		return dst, false
	}
	var meta []byte
	if len(c.Meta) > 0 {
		meta = appendStringMap(nil, c.Meta)
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

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping off: control characters escaped (\b \f \n \r \t short, the
// rest \u00XX), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(dst []byte, s string) []byte { return appendStringHTML(dst, s, false) }

// appendStringHTML is appendString that, when html is set, also escapes
// <, > and & as \u003c, \u003e, \u0026 (json.Marshal's default).
//
// Text is mostly bytes that need no escape: they are skipped eight at a
// time (unescapedRun) and copied in runs, which took the escape of a 4 KiB
// chunk of a long answer from about 9 % of the agent's CPU to a third of
// that (BenchmarkAppendStringHTML4K).
func appendStringHTML(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = unescapedRun(s, i, html)
		if i >= len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			if plainASCII(b, html) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscapedASCII(dst, b)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainASCII reports whether ASCII byte b goes into a JSON string as it
// is.
func plainASCII(b byte, html bool) bool {
	return b >= 0x20 && b != '"' && b != '\\' && (!html || (b != '<' && b != '>' && b != '&'))
}

// appendEscapedASCII writes the escape of an ASCII byte that plainASCII
// refuses.
func appendEscapedASCII(dst []byte, b byte) []byte {
	switch b {
	case '\\', '"':
		return append(dst, '\\', b)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
}

// Bytes repeated in each byte of a word, for unescapedRun.
const (
	lsb    = 0x0101010101010101
	msb    = 0x8080808080808080
	quote  = '"' * lsb
	bslash = '\\' * lsb
	lt     = '<' * lsb
	gt     = '>' * lsb
	amp    = '&' * lsb
)

// unescapedRun returns the index of the first word of eight bytes from i
// that holds a byte plainASCII may refuse (a control character, '"',
// '\\', a non-ASCII byte, and with html '<', '>' or '&'), or the end of
// the last whole word: every byte before it goes out as it is.
func unescapedRun(s string, i int, html bool) int {
	for ; i+8 <= len(s); i += 8 {
		t := s[i : i+8] // one bounds check, and the loads merged into one
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		// A byte's top bit is set in bad when the byte is ≥ 0x80, below
		// 0x20, or equal to one looked for (w^c has a zero byte there).
		// Borrows only make bytes above a flagged one flagged too, so
		// bad is zero exactly when no byte is.
		bad := w | (w-0x20*lsb)&^w | zeroByte(w^quote) | zeroByte(w^bslash)
		if html {
			bad |= zeroByte(w^lt) | zeroByte(w^gt) | zeroByte(w^amp)
		}
		if bad&msb != 0 {
			return i
		}
	}
	return i
}

// zeroByte has the top bit of a byte set when that byte of w is zero
// (and maybe of bytes above it).
func zeroByte(w uint64) uint64 { return (w - lsb) &^ w }
