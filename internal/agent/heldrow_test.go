package agent

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/store"
)

// heldTexts are chunk texts that test the row writer's escapes: HTML
// characters, controls, multi-byte and invalid UTF-8, a character cut
// between two chunks, U+2028.
var heldTexts = []string{"a", "hello, world", `quote " and \ back`, "<b>&amp;</b>", "tab\tnl\n\x00\x1f\x7f",
	"héllo ✓ 日本語", "\u2028\u2029", "bad \xff utf8", "cut \xe2\x82", "\xac after the cut", "",
	strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 41)[:4096]}

// The rows an eventLog writes for merged text chunks are exactly the
// bytes json.Marshal wrote for the merged event before the rows were
// written by hand, whatever the texts (valid UTF-8 or not, cut mid
// character), kinds, message ids and tags: the chunks are recorded
// through one log and, as an oracle, gathered as the log gathered them
// before and marshalled.
func TestHeldRowIsWhatJSONMarshalWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 36))
	member := &Member{ID: "sub-1", Name: "helper"}
	same := 0     // rounds compared byte for byte
	gaveNone := 0 // chunks that should have come back in wire form and did not
	for round := range 40 {
		st := storeWithSession(t, t.TempDir()+"/s.db")
		l := &eventLog{id: "s1", store: st}
		// Half the rounds hold nonempty valid UTF-8 only: their rows are
		// the oracle's, byte for byte, and each agent chunk (user chunks
		// are not merged) not a sub-agent's comes back in wire form.
		texts := heldTexts
		if round%2 == 0 {
			texts = slices.DeleteFunc(slices.Clone(heldTexts), func(s string) bool { return s == "" || !utf8.ValidString(s) })
		}
		var evs []Event
		for range 1 + rng.IntN(30) {
			ev := chunk([]EventKind{EventMessageChunk, EventThoughtChunk, EventUserChunk}[rng.IntN(3)],
				[]string{"m1", "m<2>", ""}[rng.IntN(3)], texts[rng.IntN(len(texts))])
			switch rng.IntN(6) {
			case 0:
				ev.TurnID = "turn&1"
			case 1:
				ev.Member = member
			}
			evs = append(evs, ev)
			// The chunk's text in wire form comes back, for the front
			// end, whenever its row is written by hand.
			_, wire := l.eventWire(ev)
			q, _ := json.Marshal(ev.Content.Text)
			if want := string(q[1 : len(q)-1]); wire != "" && wire != want {
				t.Fatalf("round %d: text %q in wire form %q, want %q", round, ev.Content.Text, wire, want)
			}
			if wire == "" && round%2 == 0 && ev.Member == nil && mergeable(&ev) {
				gaveNone++
			}
		}
		l.close()
		rows, err := st.Events(t.Context(), "s1")
		if err != nil {
			t.Fatal(err)
		}
		want := marshalMerged(t, evs)
		// Each row is what json.Marshal writes for its event (a row with
		// invalid UTF-8 aside: json.Marshal wrote it, as \ufffd).
		for i, r := range rows {
			var ev Event
			if err := json.Unmarshal(r.Payload, &ev); err != nil {
				t.Fatalf("round %d, row %d: %v: %s", round, i, err, r.Payload)
			}
			if b, _ := json.Marshal(ev); !bytes.Contains(r.Payload, []byte(`\ufffd`)) && !bytes.Equal(b, r.Payload) {
				t.Fatalf("round %d, row %d:\ngot  %s\nwant %s", round, i, r.Payload, b)
			}
		}
		// A row written by hand ends where the plain form merged on when
		// a chunk of invalid UTF-8 comes (or 20 ms passed): else the rows
		// are the oracle's, byte for byte.
		if len(rows) < len(want) {
			t.Fatalf("round %d: %d rows for %d merged events", round, len(rows), len(want))
		}
		if len(rows) == len(want) {
			same++
			for i, r := range rows {
				if !bytes.Equal(r.Payload, want[i]) {
					t.Fatalf("round %d, row %d:\ngot  %s\nwant %s", round, i, r.Payload, want[i])
				}
			}
		}
		if got, w := foldTexts(t, rows), foldTexts(t, wantRows(want)); got != w {
			t.Fatalf("round %d: rows fold to %q, want %q", round, got, w)
		}
	}
	if gaveNone > 0 {
		t.Errorf("%d valid chunks came back without their wire form", gaveNone)
	}
	if same < 20 {
		t.Errorf("only %d of 40 rounds wrote the oracle's rows", same)
	}
}

// marshalMerged is what the event log wrote before rows were written by
// hand: consecutive agent chunks of one kind, message and tags merged,
// their texts gathered raw, each merged event marshalled.
func marshalMerged(t *testing.T, evs []Event) [][]byte {
	var out [][]byte
	var held *Event
	var text []byte
	flush := func() {
		if held != nil {
			held.Content = &Block{Type: BlockText, Text: string(text)}
			b, err := json.Marshal(held)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
			held = nil
		}
	}
	for _, ev := range evs {
		if held != nil && mergeable(&ev) && held.Kind == ev.Kind && held.MessageID == ev.MessageID && held.Tags.same(&ev.Tags) && len(text) < maxHeldText {
			text = append(text, ev.Content.Text...)
			continue
		}
		flush()
		held = &Event{Kind: ev.Kind, MessageID: ev.MessageID, Tags: ev.Tags}
		text = append(text[:0], ev.Content.Text...)
	}
	flush()
	return out
}

func wantRows(payloads [][]byte) []store.Event {
	rows := make([]store.Event, len(payloads))
	for i, p := range payloads {
		var ev Event
		_ = json.Unmarshal(p, &ev)
		rows[i] = store.Event{Seq: int64(i + 1), Kind: string(ev.Kind), Payload: p}
	}
	return rows
}

// foldTexts is the replay of rows as kind, message and text per entry.
func foldTexts(t *testing.T, rows []store.Event) string {
	var b strings.Builder
	for _, e := range Fold(rows).Entries() {
		b.WriteString(string(e.Kind) + "/" + e.MessageID + ":" + e.Content.Decoded().Text + "|")
	}
	return b.String()
}

// BenchmarkHeldRow64K records the 4 KiB chunks of one 64 KiB row of a
// long answer and writes the row: the event log's CPU per streamed
// chunk, the store's commit aside.
func BenchmarkHeldRow64K(b *testing.B) {
	text := strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 41)[:4096]
	ev := chunk(EventMessageChunk, "msg_0199a3c45e6f", text)
	b.SetBytes(16 * int64(len(text)))
	b.ReportAllocs()
	var h heldRow
	for b.Loop() {
		h.start(&ev)
		for range 15 {
			if _, ok := h.add(text); !ok {
				b.Fatal("chunk not merged")
			}
		}
		if row := h.row(); row == nil {
			b.Fatal("row not written by hand")
		}
	}
}

// A front end is given a chunk's wire form only as this session's event
// log escaped it: an event that arrives with another session's (a
// sub-agent's, forwarded) goes out with none, or with this log's own.
func TestEmitGivesOnlyItsOwnLogsWireText(t *testing.T) {
	st := storeWithSession(t, t.TempDir()+"/s.db")
	front := newFakeFront()
	c := newConversation("s1", st, slog.New(slog.DiscardHandler), front)
	stale := chunk(EventMessageChunk, "m1", "<b>")
	stale.TextWire = "stale"
	live := stale
	live.Transient = true
	sub := stale
	sub.Member = &Member{ID: "sub-1"}
	for _, ev := range []Event{live, sub, stale} {
		c.emit(ev)
	}
	shown := front.shown()
	if len(shown) != 3 {
		t.Fatalf("%d events shown, want 3", len(shown))
	}
	if shown[0].TextWire != "" || shown[1].TextWire != "" {
		t.Errorf("a shown event kept the wire form it came with: %q, %q", shown[0].TextWire, shown[1].TextWire)
	}
	if shown[2].TextWire != `\u003cb\u003e` {
		t.Errorf("a stored chunk's wire form is %q, want the log's escape %q", shown[2].TextWire, `\u003cb\u003e`)
	}
}
