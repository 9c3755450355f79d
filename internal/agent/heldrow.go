package agent

import (
	"time"

	"github.com/corvid-agent/corvid/internal/jsonstring"
)

// heldRow is the text chunk an eventLog holds back, with the text of the
// later chunks of its message merged into it (store.Hold). The row is
// written as the chunks come: each chunk's text is escaped once, into
// the row's bytes, which then go to the store as they are. Those bytes
// are exactly what json.Marshal writes for the merged event
// (TestHeldRowIsWhatJSONMarshalWrites), so Fold and every release read
// them alike. A chunk whose text is not valid UTF-8 (escaped alone, a
// character cut between two chunks would become two U+FFFD) or whose
// tags the row writer does not spell starts a held row in the plain
// form: its text gathered raw and marshalled when it is released, as
// before.
//
// Escaping into the row instead of marshalling the merged text took the
// agent's CPU per streamed MiB down (BenchmarkHeldRow64K: no reflection,
// no copy of the text into a string, a faster escaper). The chunk's
// escaped text is given back too (Event.TextWire): the front end copies
// it into the chunk's frame instead of escaping the text a second time.
type heldRow struct {
	ev *Event    // the first chunk's kind, message and tags (nil: nothing held)
	at time.Time // when the first chunk came
	n  int       // bytes of text held
	// wire: the row is written in buf, up to the end of its text so far
	// (else buf holds the text, raw).
	wire bool
	buf  []byte
	// last is the size of the last row written in buf: the next one is
	// allocated at about that size, not grown and copied as it fills.
	last int
}

// takes reports whether ev's text may be merged into the held row (ev is
// mergeable).
func (h *heldRow) takes(ev *Event) bool {
	return h.ev != nil && h.ev.Kind == ev.Kind && h.ev.MessageID == ev.MessageID && h.ev.Tags.same(&ev.Tags) &&
		h.n < maxHeldText && time.Since(h.at) < maxHeldFor
}

// start holds ev, a mergeable chunk, as a new row. It returns the
// chunk's text in wire form when the row is written by hand ("" when
// not, or when the text is empty).
func (h *heldRow) start(ev *Event) (wire string) {
	h.ev = &Event{Kind: ev.Kind, MessageID: ev.MessageID, Tags: ev.Tags}
	h.at = time.Now()
	text := ev.Content.Text
	h.n = len(text)
	if text != "" && wireTags(&ev.Tags) {
		buf := make([]byte, 0, max(h.last+h.last/8, 128+2*len(text)))
		buf = append(buf, `{"kind":`...)
		buf = jsonstring.Append(buf, string(ev.Kind), true)
		if ev.MessageID != "" {
			buf = append(buf, `,"messageId":`...)
			buf = jsonstring.Append(buf, ev.MessageID, true)
		}
		buf = append(buf, `,"content":{"type":"text","text":"`...)
		from := len(buf)
		if buf, valid := jsonstring.AppendContents(buf, text, true); valid {
			h.wire, h.buf = true, buf
			return string(buf[from:])
		}
	}
	h.wire = false
	if cap(h.buf) > maxHeldText*2 {
		h.buf = nil
	}
	h.buf = append(h.buf[:0], text...)
	return ""
}

// add merges the text of a chunk that takes accepted, and returns it in
// wire form as start does; ok is false when it cannot (the row must be
// released, and the chunk held anew).
func (h *heldRow) add(text string) (wire string, ok bool) {
	if h.wire {
		n := len(h.buf)
		buf, valid := jsonstring.AppendContents(h.buf, text, true)
		if !valid {
			h.buf = buf[:n]
			return "", false
		}
		h.buf = buf
		// A copy: the row's bytes go to the store, which owns them once
		// the row is released (on the store's goroutine, maybe while
		// the front end still writes this chunk's frame).
		wire = string(buf[n:])
	} else {
		h.buf = append(h.buf, text...)
	}
	h.n += len(text)
	return wire, true
}

// row ends the held row and returns its payload, or nil when it is held
// in the plain form (event gives it).
func (h *heldRow) row() []byte {
	if !h.wire {
		return nil
	}
	buf := append(h.buf, `"}`...)
	if h.ev.TurnID != "" {
		buf = append(buf, `,"turnId":`...)
		buf = jsonstring.Append(buf, h.ev.TurnID, true)
	}
	buf = append(buf, '}')
	h.last = len(buf)
	h.ev, h.wire, h.buf = nil, false, nil // the store owns buf now
	return buf
}

// event ends a held row in the plain form and returns its event.
func (h *heldRow) event() Event {
	ev := *h.ev
	ev.Content = &Block{Type: BlockText, Text: string(h.buf)}
	h.ev = nil
	return ev
}

// wireTags reports whether a held row's tags are ones row spells: a
// chunk's tags that Tags.same lets merge, but only the turn id (a
// sub-agent's chunks, and the final output, are held in the plain form).
func wireTags(t *Tags) bool {
	return t.Member == nil && t.FinalOutput == nil && t.SubagentUsage == nil && t.Team == nil && t.Drain == nil
}
