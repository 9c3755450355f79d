package agent

import (
	"encoding/json"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/llm"
)

// maxContextText bounds the text one context row carries.
const maxContextText = 64 << 10

// contextTextLocked appends each text of m longer than maxContextText
// as context_text rows of at most that size and returns m with those
// texts empty, for the context row that must follow at once. A long
// answer is then never encoded, copied and handed to SQLite whole, each
// step a copy of its size (issue 29: a 40 MiB answer peaked at 10× its
// size). Fold puts the pieces back.
func (l *eventLog) contextTextLocked(m llm.Message) llm.Message {
	var parts []llm.Part
	long := 0
	for _, p := range m.Parts {
		if len(p.Text) > maxContextText {
			long += len(p.Text)
		}
	}
	if long == 0 {
		return m
	}
	// The streamed text the message was joined from is garbage now.
	makeRoomFor(long)
	sinceGC := 0
	for i, p := range m.Parts {
		if len(p.Text) <= maxContextText {
			continue
		}
		if parts == nil {
			parts = append([]llm.Part(nil), m.Parts...)
		}
		for rest := p.Text; rest != ""; {
			piece := cutText(rest, maxContextText)
			l.appendLocked(recordContextText, contextTextRecord{Part: i, Text: piece})
			rest = rest[len(piece):]
			if sinceGC += len(piece); long >= hugeText && sinceGC >= rowsPerGC {
				runtime.GC()
				sinceGC = 0
			}
		}
		parts[i].Text = ""
	}
	if parts != nil {
		m.Parts = parts
	}
	return m
}

// rowsPerGC is how many bytes of a huge text's rows are written between
// two collections. The text itself is live, so the GC would let the
// rows' garbage (each row's payload, once committed) grow to its size
// before collecting: its memory would peak at twice the text on top of
// the text. A collection per rowsPerGC bytes (a few ms for a heap that
// holds mostly the text, which has no pointers to mark) bounds that
// garbage to a few times rowsPerGC, and the next rows reuse its memory.
const rowsPerGC = 2 << 20

// contextTextRecord is a context_text row's payload.
type contextTextRecord struct {
	Part int    `json:"part"`
	Text string `json:"text"`
}

// cutText returns the longest prefix of s of at most n bytes that does
// not split a UTF-8 sequence (at least one rune).
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if i == 0 {
		_, size := utf8.DecodeRuneInString(s)
		i = size
	}
	return s[:i]
}

// contextText keeps a context_text row's piece for the next context row.
func (f *folder) contextText(payload []byte) {
	var ct contextTextRecord
	if json.Unmarshal(payload, &ct) != nil || ct.Part < 0 {
		return
	}
	if f.pieces == nil {
		f.pieces = map[int]*strings.Builder{}
	}
	b := f.pieces[ct.Part]
	if b == nil {
		b = &strings.Builder{}
		f.pieces[ct.Part] = b
	}
	b.WriteString(ct.Text)
}

// fillContextText puts the texts gathered from context_text rows into the
// parts of m, the context row that followed them.
func fillContextText(m *llm.Message, pieces map[int]*strings.Builder) {
	for i, b := range pieces {
		if i < len(m.Parts) && m.Parts[i].Text == "" {
			m.Parts[i].Text = b.String()
		}
	}
}
