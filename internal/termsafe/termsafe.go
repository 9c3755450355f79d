// Package termsafe writes text that others chose (an agent's answer, a
// file's lines, a command it proposes) so that a terminal shows it and
// does not obey it. A control character written to a terminal as it is
// is a control again: ESC starts sequences that move the cursor and
// erase (a question's command drawn over by a harmless one: the user
// allows what they did not see), set the window title, write the
// clipboard (OSC 52) or make links; CR and BS overwrite; C1 characters
// are controls to some terminals; the bidirectional controls reorder
// what a terminal that applies them shows (Trojan Source). Each such
// character is written as its escape (\x1b, \u007f, \u009b, \u202e), plain text;
// newlines and tabs stay, and a CR just before a LF (a CRLF file's line
// ends) is dropped.
//
// It imports nothing of corvid: the terminal UI (an ACP client) and the
// print mode both use it.
package termsafe

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// JSON returns raw, JSON from an agent, with every string's
// controls written as visible escapes (see above). raw is returned as it
// is when it holds none (the common case: no copy), else a new buffer.
// raw must be valid JSON (the connection checked each line).
func JSON(raw []byte) []byte {
	i := firstSuspect(raw)
	if i < 0 {
		return raw
	}
	out := make([]byte, 0, len(raw)+16)
	out = append(out, raw[:i]...)
	for i < len(raw) {
		c := raw[i]
		switch {
		case c == '\\':
			n := escapeLen(raw[i:])
			esc := raw[i : i+n]
			if r, ok := controlEscape(esc); ok {
				if r == '\r' && bytes.HasPrefix(raw[i+n:], []byte(`\n`)) {
					i += n // CRLF: the LF alone
					continue
				}
				out = appendVisible(out, r, true)
			} else {
				out = append(out, esc...)
			}
			i += n
		case c >= 0x7f:
			r, n := utf8.DecodeRune(raw[i:])
			if hidden(r) {
				out = appendVisible(out, r, true)
			} else {
				out = append(out, raw[i:i+n]...)
			}
			i += n
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// firstSuspect is the offset of the first escape in raw that stands for
// a control, or of the first hidden character written as it is, or -1.
// It looks byte by byte only at backslashes (a long answer's chunks hold
// a \n a line) and at the lead bytes of the characters hidden holds.
func firstSuspect(raw []byte) int {
	first := firstHidden(raw)
	end := len(raw)
	if first >= 0 {
		end = first
	}
	for i := 0; i+1 < end; {
		j := bytes.IndexByte(raw[i:end-1], '\\')
		if j < 0 {
			break
		}
		i += j
		switch raw[i+1] {
		case 'r', 'b', 'f':
			return i
		case 'u':
			if _, ok := controlEscape(raw[i : i+escapeLen(raw[i:])]); ok {
				return i
			}
		}
		i += 2 // past a \u too: its hex digits hold no backslash
	}
	return first
}

// escapeLen is the length of the JSON escape at the start of s.
func escapeLen(s []byte) int {
	if len(s) >= 6 && s[1] == 'u' {
		return 6
	}
	return min(2, len(s))
}

// controlEscape tells whether esc, one JSON escape, stands for a control
// character (other than newline and tab) or a hidden one, and which.
func controlEscape(esc []byte) (rune, bool) {
	switch string(esc) {
	case `\r`:
		return '\r', true
	case `\b`:
		return '\b', true
	case `\f`:
		return '\f', true
	}
	if len(esc) != 6 {
		return 0, false
	}
	var r rune
	for _, h := range esc[2:] {
		var v byte
		switch {
		case h >= '0' && h <= '9':
			v = h - '0'
		case h >= 'a' && h <= 'f':
			v = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			v = h - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	if r == '\n' || r == '\t' {
		return 0, false
	}
	return r, r < 0x20 || hidden(r)
}

// hidden tells whether r is DEL, a C1 control or a bidirectional control.
func hidden(r rune) bool {
	switch {
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// appendVisible appends r's escape: \xHH for a C0 control, \uHHHH for
// DEL and the others (a JSON escape too: a JSON document shown on a
// terminal stays JSON, since its encoder escaped C0 controls already but
// left these raw); inJSON doubles the backslash (the escape is written
// inside a JSON string).
func appendVisible(b []byte, r rune, inJSON bool) []byte {
	if inJSON {
		b = append(b, '\\')
	}
	if r < 0x20 {
		return fmt.Appendf(b, `\x%02x`, r)
	}
	return fmt.Appendf(b, `\u%04x`, r)
}

// String is JSON for text already decoded: its controls other than
// newline and tab, and its hidden characters, as visible escapes, and a
// byte that is not UTF-8 as \xHH (a lone 0x9b is CSI to an 8-bit
// terminal).
func String(s string) string {
	i := strings.IndexFunc(s, needsEscape)
	if i < 0 {
		return s
	}
	var b []byte
	b = append(b, s[:i]...)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\r' && strings.HasPrefix(s[i+n:], "\n"):
		case r == utf8.RuneError && n == 1:
			b = fmt.Appendf(b, `\x%02x`, s[i])
		case r != utf8.RuneError && needsEscape(r):
			b = appendVisible(b, r, false)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// needsEscape tells whether r is written as an escape (or dropped: a CR
// before a LF). utf8.RuneError stands for a byte that is not UTF-8 (and
// for U+FFFD itself, which then takes the slow way and is kept).
func needsEscape(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || hidden(r) || r == utf8.RuneError
}

// Writer writes what it is given to a terminal as String would have it,
// as it comes: a character split between two writes, or a CR at the end
// of one (a LF may follow), waits for the next write or Flush.
type Writer struct {
	w    io.Writer
	held []byte // the start of a character, or a CR, not yet written
	buf  []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p's text; it reports len(p) when what it wrote for p was
// written.
func (t *Writer) Write(p []byte) (int, error) {
	s := p
	if len(t.held) > 0 {
		t.held = append(t.held, p...)
		s, t.held = t.held, nil
	}
	// What may be the start of a character or a CRLF goes with the next
	// write.
	keep := 0
	if n := len(s); n > 0 && s[n-1] == '\r' {
		keep = 1
	} else {
		for i := n - 1; i >= 0 && i >= n-3; i-- {
			if utf8.RuneStart(s[i]) {
				if !utf8.FullRune(s[i:]) {
					keep = n - i
				}
				break
			}
		}
	}
	body := s[:len(s)-keep]
	t.held = append(t.held[:0], s[len(s)-keep:]...)
	if clean(body) {
		if _, err := t.w.Write(body); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	t.buf = append(t.buf[:0], String(string(body))...)
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back (an unfinished character, a last CR).
func (t *Writer) Flush() error {
	if len(t.held) == 0 {
		return nil
	}
	s := String(string(t.held))
	t.held = t.held[:0]
	_, err := io.WriteString(t.w, s)
	return err
}

// clean tells whether String would leave b as it is. It looks at eight
// bytes at a time for C0 controls, and at the lead bytes of the hidden
// characters with bytes.IndexByte: a 10 MB answer printed to a terminal
// costs about a millisecond.
func clean(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	if firstHidden(b) >= 0 {
		return false
	}
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// A byte below 0x20 sets its high bit here (no false negatives;
		// a false positive only costs the look below).
		if (x-0x2020202020202020)&^x&0x8080808080808080 != 0 && !cleanBytes(b[i:i+8]) {
			return false
		}
	}
	return cleanBytes(b[i:])
}

// firstHidden is the offset of the first character of b that hidden
// holds, written as it is, or -1. It looks only at the bytes that start
// one (DEL, and the lead bytes of the C1 and bidirectional controls),
// with bytes.IndexByte.
func firstHidden(b []byte) int {
	first := -1
	for _, lead := range [...]byte{0x7f, 0xc2, 0xd8, 0xe2} {
		for j := 0; first < 0 || j < first; j++ {
			k := bytes.IndexByte(b[j:], lead)
			if k < 0 {
				break
			}
			j += k
			if r, _ := utf8.DecodeRune(b[j:]); hidden(r) {
				if first < 0 || j < first {
					first = j
				}
				break
			}
		}
	}
	return first
}

// cleanBytes tells whether b holds no C0 control but newline and tab.
func cleanBytes(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' {
			return false
		}
	}
	return true
}
