package agent

import (
	"encoding/json"
	"hash/maphash"
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
//
// When the texts of an answer, one after the other, are exactly the
// answer text in the rows since the model context was last recorded (its
// streamed chunks: l.answer), a long one is not stored again: a
// context_text row says where in that text it is ({"streamed": [from,
// to]}), and Fold cuts it from the chunks. A 10 MB answer was written
// twice, and the second time after its last chunk, which held up the
// prompt's answer (issue 36).
func (l *eventLog) contextTextLocked(m llm.Message) llm.Message {
	var parts []llm.Part
	long, other := 0, 0 // the long texts' bytes; of those not an answer's text
	for _, p := range m.Parts {
		if len(p.Text) > maxContextText {
			long += len(p.Text)
			if p.Type != llm.PartText {
				other += len(p.Text)
			}
		}
	}
	if long == 0 {
		return m
	}
	streamed := m.Role == llm.RoleAssistant && l.answer.isTextOf(m)
	if streamed {
		long = other // what is stored in pieces
	}
	at := 0 // where the part's text starts in the streamed answer
	// The streamed text the message was joined from is garbage now.
	makeRoomFor(long)
	sinceGC := 0
	for i, p := range m.Parts {
		from := at
		if p.Type == llm.PartText {
			at += len(p.Text)
		}
		if len(p.Text) <= maxContextText {
			continue
		}
		if parts == nil {
			parts = append([]llm.Part(nil), m.Parts...)
		}
		if streamed && p.Type == llm.PartText {
			l.appendLocked(recordContextText, contextTextRecord{Part: i, Streamed: &[2]int{from, at}})
			parts[i].Text = ""
			continue
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
	// Streamed: the part's text is these bytes [from, to) of the answer
	// text of the rows since the model context was last recorded (Text is
	// empty). Releases before it fold the part as an empty text.
	Streamed *[2]int `json:"streamed,omitempty"`
}

// answerChunk reports whether ev's text is part of the session's answer
// as Fold gathers it (folder.unsaved): an agent message's text chunk that
// is not a sub-agent's (its text is its own context's).
func answerChunk(ev *Event) bool {
	return ev.Kind == EventMessageChunk && isText(ev.Content) && ev.Member == nil
}

// streamedAnswer follows the answer text of the rows an eventLog appends
// since it last recorded the model context, by length and hash (the text
// itself is the conversation's), to tell whether a context text is that
// text.
type streamedAnswer struct {
	n int
	h maphash.Hash
	// known: a context record was appended since the log opened (the
	// rows before, another process's, are Fold's and not followed here).
	known bool
	lost  bool // a row could not be appended, or a chunk's row does not hold its text
}

func (a *streamedAnswer) add(ev *Event) {
	if !answerChunk(ev) {
		return
	}
	if ev.Content.TextJSON != "" || !utf8.ValidString(ev.Content.Text) {
		// Stored as JSON, a chunk's invalid bytes become U+FFFD (a
		// rune cut between two chunks too): its row no longer holds
		// the text, and the offsets after it would be wrong.
		a.lost = true
		return
	}
	a.n += len(ev.Content.Text)
	a.h.WriteString(ev.Content.Text)
}

// isTextOf reports whether the text parts of m, one after the other, are
// the answer text followed so far.
func (a *streamedAnswer) isTextOf(m llm.Message) bool {
	if !a.known || a.lost {
		return false
	}
	n := 0
	for _, p := range m.Parts {
		if p.Type == llm.PartText {
			n += len(p.Text)
		}
	}
	if n != a.n {
		return false
	}
	var h maphash.Hash
	h.SetSeed(a.h.Seed())
	for _, p := range m.Parts {
		if p.Type == llm.PartText {
			h.WriteString(p.Text)
		}
	}
	return h.Sum64() == a.h.Sum64()
}

func (a *streamedAnswer) reset() {
	a.n, a.known, a.lost = 0, true, false
	a.h.Reset()
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
	if r := ct.Streamed; r != nil {
		if !f.haveAnswer {
			f.answer, f.haveAnswer = f.unsaved.String(), true
			if f.dec.wire {
				f.answer = unescapeJSON(f.answer)
			}
		}
		if r[0] < 0 || r[0] > r[1] || r[1] > len(f.answer) {
			return
		}
		ct.Text = f.answer[r[0]:r[1]]
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
