package agent

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/llm"
)

// Reading a stored log decodes every row, and most rows are streamed text
// chunks and the model context's text: encoding/json's reflection cost most
// of session/load. The decoders here read the shapes json.Marshal writes
// for those rows by hand and give up (ok false) on anything else, so the
// caller falls back to json.Unmarshal; what they return is exactly what
// json.Unmarshal returns for the same bytes (FuzzRowDecoders holds them to
// it).

// rowDecoder keeps what consecutive rows repeat, so each row's message id
// is not allocated again.
type rowDecoder struct {
	messageID string
	// block is the Content chunk gives: valid until the next row (the
	// folder copies it into the entry it adds).
	block Block
	// wire: chunk gives the text in wire form (Block.TextJSON), not
	// decoded.
	wire bool
}

// knownKinds are the event kinds a stored chunk row names.
var knownKinds = []EventKind{EventUserChunk, EventMessageChunk, EventThoughtChunk}

// chunk decodes a text chunk row:
// {"kind":K,"messageId":M,"content":{"type":"text","text":T},"turnId":…}
// (messageId and the tags optional).
func (d *rowDecoder) chunk(p []byte, ev *Event) bool {
	var s scan
	s.p = p
	if !s.lit(`{"kind":"`) {
		return false
	}
	kind, ok := s.rawString()
	if !ok {
		return false
	}
	ev.Kind = ""
	for _, k := range knownKinds {
		if string(kind) == string(k) {
			ev.Kind = k
		}
	}
	if ev.Kind == "" {
		return false
	}
	ev.MessageID = ""
	if s.lit(`,"messageId":"`) {
		id, ok := s.rawString()
		if !ok {
			return false
		}
		if string(id) != d.messageID {
			d.messageID = string(id)
		}
		ev.MessageID = d.messageID
	}
	if !s.lit(`,"content":{"type":"text","text":`) {
		return false
	}
	if d.wire {
		raw, n, ok := s.wireText()
		if !ok || !s.lit(`}`) {
			return false
		}
		d.block = Block{Type: BlockText, TextJSON: raw, TextLen: n}
	} else {
		text, ok := s.str()
		if !ok || !s.lit(`}`) {
			return false
		}
		d.block = Block{Type: BlockText, Text: text}
	}
	ev.Content = &d.block
	ev.Tags = Tags{}
	if s.lit(`,`) {
		// The tags, last (eventtags.go): the rest of the object holds
		// nothing but Tags' fields, or the caller's json.Unmarshal reads
		// the row.
		tail := make([]byte, 0, 1+len(s.p)-s.i)
		dec := json.NewDecoder(bytes.NewReader(append(append(tail, '{'), s.p[s.i:]...)))
		dec.DisallowUnknownFields()
		// Decoded into a variable of its own: &ev.Tags would move every
		// caller's Event to the heap, tagged or not.
		tags := new(Tags)
		if dec.Decode(tags) != nil || dec.InputOffset() != int64(1+len(s.p)-s.i) {
			return false
		}
		ev.Tags = *tags
		return true
	}
	return s.lit(`}`) && s.i == len(s.p)
}

// message decodes a model context row whose parts are text, thinking, tool
// uses and tool results without images or data:
// {"role":R,"parts":[{"type":T,…},…]}.
func (d *rowDecoder) message(p []byte) (m llm.Message, ok bool) {
	return m, d.decodeMessage(p, &m)
}

func (d *rowDecoder) decodeMessage(p []byte, m *llm.Message) bool {
	var s scan
	s.p = p
	if !s.lit(`{"role":`) {
		return false
	}
	role, ok := s.str()
	if !ok || !s.lit(`,"parts":`) {
		return false
	}
	m.Role = llm.Role(role)
	m.Parts = nil
	if s.lit(`null}`) {
		return s.i == len(s.p)
	}
	if !s.lit(`[`) {
		return false
	}
	if s.lit(`]}`) {
		m.Parts = []llm.Part{}
		return s.i == len(s.p)
	}
	// Size the slice once: count the parts' openings at the top level.
	parts := make([]llm.Part, 0, s.countObjects())
	for {
		// Decoded in place (a part is large), in the slice's zeroed room
		// when the count was right.
		if len(parts) < cap(parts) {
			parts = parts[:len(parts)+1]
		} else {
			parts = append(parts, llm.Part{})
		}
		if !s.part(&parts[len(parts)-1]) {
			return false
		}
		if s.lit(`,`) {
			continue
		}
		if !s.lit(`]}`) || s.i != len(s.p) {
			return false
		}
		m.Parts = parts
		return true
	}
}

// part decodes one part in the field order json.Marshal writes.
func (s *scan) part(pt *llm.Part) bool {
	if !s.lit(`{"type":`) {
		return false
	}
	t, ok := s.str()
	if !ok {
		return false
	}
	pt.Type = llm.PartType(t)
	for _, f := range []struct {
		key string
		dst *string
	}{{`,"text":`, &pt.Text}, {`,"signature":`, &pt.Signature}, {`,"mimeType":`, &pt.MimeType},
		{`,"toolUseId":`, &pt.ToolUseID}, {`,"toolName":`, &pt.ToolName}} {
		if s.lit(f.key) {
			if *f.dst, ok = s.str(); !ok {
				return false
			}
		}
	}
	if s.lit(`,"input":`) {
		start := s.i
		if !s.skipValue() || s.i == start || isSpace(s.p[start]) || isSpace(s.p[s.i-1]) || !json.Valid(s.p[start:s.i]) {
			return false
		}
		pt.Input = bytes.Clone(s.p[start:s.i])
	}
	if s.lit(`,"isError":true`) {
		pt.IsError = true
	}
	return s.lit(`}`)
}

// scan reads p from i.
type scan struct {
	p []byte
	i int
}

// lit consumes lit if p continues with it.
func (s *scan) lit(lit string) bool {
	if len(s.p)-s.i >= len(lit) && string(s.p[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// rawString reads the rest of a string whose opening quote was consumed;
// it must hold only printable ASCII without escapes (kinds and ids).
func (s *scan) rawString() ([]byte, bool) {
	start := s.i
	for s.i < len(s.p) {
		c := s.p[s.i]
		if c == '"' {
			s.i++
			return s.p[start : s.i-1], true
		}
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// str reads a JSON string as encoding/json decodes it. Invalid UTF-8 is
// left to encoding/json (ok false).
func (s *scan) str() (string, bool) {
	if s.i >= len(s.p) || s.p[s.i] != '"' {
		return "", false
	}
	s.i++
	start := s.i
	ascii := true
	for s.i < len(s.p) {
		c := s.p[s.i]
		switch {
		case c == '"':
			raw := s.p[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(raw) {
				return "", false
			}
			return string(raw), true
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		s.i++
	}
	return "", false
}

// escaped finishes str for a string with escapes, from its first byte at
// start.
func (s *scan) escaped(start int) (string, bool) {
	out := make([]byte, 0, s.i-start+16)
	out = append(out, s.p[start:s.i]...)
	for s.i < len(s.p) {
		c := s.p[s.i]
		switch {
		case c == '"':
			s.i++
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.p) {
			return "", false
		}
		e := s.p[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				// A pair decodes to one rune; a lone half is U+FFFD, as
				// encoding/json has it.
				save := s.i
				if s.lit(`\u`) {
					if r2, ok := s.hex4(); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							continue
						}
					}
				}
				s.i = save
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape.
func (s *scan) hex4() (rune, bool) {
	if len(s.p)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.p[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	s.i += 4
	return r, true
}

// skipValue moves past one JSON value, as far as its brackets and
// strings tell (the caller checks it with json.Valid).
func (s *scan) skipValue() bool {
	depth := 0
	for s.i < len(s.p) {
		switch s.p[s.i] {
		case '"':
			s.i++
			for s.i < len(s.p) && s.p[s.i] != '"' {
				if s.p[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			if s.i >= len(s.p) {
				return false
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return true
			}
			depth--
		case ',':
			if depth == 0 {
				return true
			}
		}
		s.i++
		if depth == 0 && s.i < len(s.p) && (s.p[s.i-1] == '"' || s.p[s.i-1] == '}' || s.p[s.i-1] == ']') {
			return true
		}
	}
	return false
}

// countObjects counts the objects that open at the current depth before
// the array the scan is in closes: the number of parts, to size the slice.
func (s *scan) countObjects() int {
	n, depth := 0, 0
	for i := s.i; i < len(s.p); i++ {
		switch s.p[i] {
		case '"':
			i++
			for i < len(s.p) && s.p[i] != '"' {
				if s.p[i] == '\\' {
					i++
				}
				i++
			}
		case '{':
			if depth == 0 {
				n++
			}
			depth++
		case '[':
			depth++
		case '}':
			depth--
		case ']':
			if depth == 0 {
				return n
			}
			depth--
		}
	}
	return n
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Replay copies a stored chunk's text into the frame as the row holds it,
// escaped, without decoding it and encoding it again. That gives the frame
// the encoder writes only when the stored bytes are the ones json.Marshal
// writes for the text they decode to: its escaping goes character by
// character, so the escaped texts of a message's chunks, joined, are then
// the escaped text of the message. Stored bytes in another form (an
// invalid byte json.Marshal wrote as \ufffd, which decodes to a U+FFFD it
// writes as is; an escape another encoder chose, such as \/ or \u00e9) are
// decoded and escaped again, that chunk alone.

// wireStr reads a JSON string whose bytes are exactly what json.Marshal
// writes for its text; it returns them (quotes excluded) and the text's
// length. ok is false for any other string, and the scan is then left
// anywhere.
func (s *scan) wireStr() (raw []byte, n int, ok bool) {
	if s.i >= len(s.p) || s.p[s.i] != '"' {
		return nil, 0, false
	}
	s.i++
	start := s.i
	for s.i < len(s.p) {
		c := s.p[s.i]
		switch {
		case c == '"':
			raw = s.p[start:s.i]
			s.i++
			return raw, n, true
		case c == '\\':
			m := wireEscape(s.p[s.i:])
			if m == 0 {
				return nil, 0, false
			}
			if m == 6 && s.p[s.i+2] == '2' { // \u2028, \u2029
				n += 3
			} else {
				n++
			}
			s.i += m
		case c < 0x20, c == '<', c == '>', c == '&':
			return nil, 0, false
		case c < utf8.RuneSelf:
			s.i++
			n++
		default:
			r, size := utf8.DecodeRune(s.p[s.i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return nil, 0, false
			}
			s.i += size
			n += size
		}
	}
	return nil, 0, false
}

// wireEscape returns the length of the escape p starts with when it is the
// one json.Marshal writes for its character, else 0.
func wireEscape(p []byte) int {
	if len(p) < 2 {
		return 0
	}
	switch p[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
	default:
		return 0
	}
	if len(p) < 6 {
		return 0
	}
	switch string(p[2:6]) {
	case "003c", "003e", "0026", "2028", "2029":
		return 6
	}
	if p[2] != '0' || p[3] != '0' || (p[4] != '0' && p[4] != '1') || !isLowerHex(p[5]) {
		return 0
	}
	switch c := (p[4]-'0')<<4 | hexValue(p[5]); c {
	case '\b', '\f', '\n', '\r', '\t':
		return 0 // written short
	}
	return 6
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func hexValue(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// wireText reads a JSON string into its wire form (see wireStr): the
// stored bytes when they are in it, else the text decoded and escaped
// again.
func (s *scan) wireText() (raw string, n int, ok bool) {
	start := s.i
	if b, n, ok := s.wireStr(); ok {
		return string(b), n, true
	}
	s.i = start
	text, ok := s.str()
	if !ok {
		return "", 0, false
	}
	return escapeJSON(text), len(text), true
}

// escapeJSON is text in wire form: the contents of the JSON string
// json.Marshal writes for it.
func escapeJSON(text string) string {
	b, _ := json.Marshal(text) // a string always encodes
	return string(b[1 : len(b)-1])
}

// unescapeJSON is the text of a string in wire form.
func unescapeJSON(raw string) string {
	var s string
	_ = json.Unmarshal([]byte(`"`+raw+`"`), &s) // wire form is valid JSON
	return s
}

// CutWire returns the longest start of a text in wire form (see
// Block.TextJSON) whose text is at most max bytes and ends on a character
// boundary, and that text's length: where a cut of the text into pieces
// of at most max bytes on rune boundaries cuts it first.
func CutWire(esc string, max int) (head string, n int) {
	for i := 0; i < len(esc); {
		w, d := 1, 1 // the character's bytes in esc and in the text
		switch c := esc[i]; {
		case c == '\\' && esc[i+1] == 'u':
			w = 6
			if esc[i+2] == '2' { // \u2028, \u2029
				d = 3
			}
		case c == '\\':
			w = 2
		case c >= utf8.RuneSelf:
			_, w = utf8.DecodeRuneInString(esc[i:])
			d = w
		}
		if n+d > max {
			return esc[:i], n
		}
		i += w
		n += d
	}
	return esc, n
}
