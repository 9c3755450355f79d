// Package jsonstring writes Go strings as JSON strings, byte for byte as
// encoding/json does, without its reflection and faster: text is mostly
// bytes that need no escape, and those are skipped eight at a time. The
// frames of a streamed answer (internal/acp) and the event-log rows of
// its text (internal/agent) are written with it; start at Append.
package jsonstring

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append writes s as a JSON string the way encoding/json does: control
// characters escaped (\b \f \n \r \t short, the rest \u00XX), invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped, and when html is set (as
// json.Marshal does by default) <, > and & as \u003c, \u003e, \u0026.
func Append(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	dst, _ = AppendContents(dst, s, html)
	return append(dst, '"')
}

// AppendContents is Append without the quotes; valid reports whether s
// was valid UTF-8 (else some bytes were written as \ufffd). The contents
// of several strings, each valid, are together those of their
// concatenation.
//
// Bytes that need no escape are skipped eight at a time (unescapedRun)
// and copied in runs: a 4 KiB chunk of a long answer took 2.5-2.9 us
// instead of 5.2-5.4 us one byte at a time (BenchmarkAppend4K).
func AppendContents(dst []byte, s string, html bool) (out []byte, valid bool) {
	valid = true
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
			valid = false
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
	return append(dst, s[start:]...), valid
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
