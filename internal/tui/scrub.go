package tui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/acp"
)

// What the agent sends is drawn on the user's terminal, and the agent
// says what its model wrote, what files hold and what commands print:
// text an untrusted repository can choose. A control character in it
// would reach the terminal as one. ESC starts sequences that move the
// cursor and erase (a permission question's command drawn over by a
// harmless one: the user allows what they did not see), set the window
// title, write the clipboard (OSC 52) or make links; CR and BS overwrite;
// C1 characters are controls to some terminals; the bidirectional
// controls reorder what a terminal that applies them shows (Trojan
// Source). So every string from the agent is scrubbed where it comes
// in: the params of its notifications and requests, the results and
// errors of the TUI's calls, and its stderr. Each such character is
// shown as its escape (\x1b, \u009b, \u202e) and draws as plain text;
// a CR just before a LF (a CRLF file's line ends) is dropped. Newlines
// and tabs stay: the TUI lays them out itself.

// scrubJSON returns raw, JSON from the agent, with every string's
// controls written as visible escapes (see above). raw is returned as it
// is when it holds none (the common case: no copy), else a new buffer.
// raw must be valid JSON (the connection checked each line).
func scrubJSON(raw []byte) []byte {
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
	first := -1
	for _, b := range [...]byte{0x7f, 0xc2, 0xd8, 0xe2} {
		for j := 0; first < 0 || j < first; {
			k := bytes.IndexByte(raw[j:], b)
			if k < 0 {
				break
			}
			j += k
			if r, _ := utf8.DecodeRune(raw[j:]); hidden(r) {
				if first < 0 || j < first {
					first = j
				}
				break
			}
			j++
		}
	}
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

// appendVisible appends r's escape: \xHH for a C0 control and DEL, \uHHHH
// for the others; inJSON doubles the backslash (the escape is written
// inside a JSON string).
func appendVisible(b []byte, r rune, inJSON bool) []byte {
	if inJSON {
		b = append(b, '\\')
	}
	if r <= 0x7f {
		return fmt.Appendf(b, `\x%02x`, r)
	}
	return fmt.Appendf(b, `\u%04x`, r)
}

// scrubText is scrubJSON for text already decoded: its controls other
// than newline and tab, and its hidden characters, as visible escapes.
func scrubText(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < 0x20 && r != '\n' && r != '\t') || hidden(r) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\r' && strings.HasPrefix(s[i+n:], "\n"):
		case (r < 0x20 && r != '\n' && r != '\t') || hidden(r):
			b.Write(appendVisible(nil, r, false))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// scrubError is err, from a call to the agent, with the message and data
// of a JSON-RPC error scrubbed.
func scrubError(err error) error {
	var e *acp.Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Message = scrubText(c.Message)
	if c.Data != nil {
		if raw, merr := json.Marshal(c.Data); merr == nil {
			var d any
			if json.Unmarshal(scrubJSON(raw), &d) == nil {
				c.Data = d
			}
		}
	}
	return &c
}
