package agent

import (
	"fmt"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/tool"
)

// storedTurn5k stores the session BenchmarkLoad5kEvents loads (test/bench):
// one prompt answered by 2,500 thinking and 2,500 text one-character chunks
// alternating (5,000 rows that cannot merge), the answer's context record
// holding all 5,000 parts, a usage reading and the turn's info.
func storedTurn5k(tb testing.TB) (*store.Store, string) {
	tb.Helper()
	st, err := store.Open(tb.TempDir() + "/s.db")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	const id = "s5k"
	if err := st.CreateSession(tb.Context(), store.Session{ID: id, Cwd: "/w"}); err != nil {
		tb.Fatal(err)
	}
	l := &eventLog{id: id, store: st}
	l.event(Event{Kind: EventUserChunk, MessageID: "user_1", Content: &Block{Type: BlockText, Text: "go"}, Tags: Tags{TurnID: "01a2345c3c1c74edb80ef04b04e36552"}})
	l.context(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}})
	var parts []llm.Part
	for i := range 2500 {
		d := fmt.Sprint(i % 10)
		l.event(chunk(EventThoughtChunk, "thought_1", d))
		l.event(chunk(EventMessageChunk, "msg_1", d))
		parts = append(parts, llm.Part{Type: llm.PartThinking, Text: d, Signature: "script"}, llm.Text(d))
	}
	l.context(llm.Message{Role: llm.RoleAssistant, Parts: parts})
	l.event(Event{Kind: EventUsage, Usage: &Usage{Used: 10, Size: 1000}})
	l.event(Event{Kind: EventInfo, Title: "the turn"})
	l.close()
	if err := st.Flush(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return st, id
}

// BenchmarkFoldStored5k reads and folds the 5k-event session of
// session/load's benchmark and lists its replay: the agent's share of the
// load.
func BenchmarkFoldStored5k(b *testing.B) {
	st, id := storedTurn5k(b)
	b.ReportAllocs()
	for b.Loop() {
		lg, err := FoldStored(b.Context(), st, id)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for range lg.Replayed() {
			n++
		}
		if n != 5002 {
			b.Fatalf("%d replayed events, want 5002", n)
		}
	}
}

// BenchmarkFoldStream5k is BenchmarkFoldStored5k through FoldStream: the
// replay given as the rows are read, text in wire form.
func BenchmarkFoldStream5k(b *testing.B) {
	st, id := storedTurn5k(b)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if _, err := FoldStream(b.Context(), st, id, 64<<10, func(Event) { n++ }); err != nil {
			b.Fatal(err)
		}
		if n != 5002 {
			b.Fatalf("%d replayed events, want 5002", n)
		}
	}
}

// streamRows folds rows as FoldStream does (wire form, entries given out
// as they settle) and returns the log and the events given, decoded.
func streamRows(rows []store.Event, maxText int) (*Log, []Event, []Event) {
	var wire, decoded []Event
	f := newFolder()
	f.dec.wire, f.maxText = true, maxText
	f.emit = func(ev Event) {
		ev = kept(ev)
		wire = append(wire, ev)
		d := ev
		d.Content = ev.Content.Decoded()
		decoded = append(decoded, d)
	}
	for i := range rows {
		f.row(&rows[i])
	}
	return f.finish(), wire, decoded
}

// checkStream holds the streaming fold to Fold: the same events in the
// same order, text in json.Marshal's form, and the same memory.
func checkStream(t *testing.T, rows []store.Event, maxText int) {
	t.Helper()
	want := Fold(rows)
	lg, wire, got := streamRows(rows, maxText)
	if w := inPieces(want.Replay(), maxText); !reflect.DeepEqual(got, w) {
		if len(got) != len(w) {
			t.Fatalf("streamed %d events, Fold replays %d", len(got), len(w))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], w[i]) {
				t.Fatalf("event %d: streamed %#v %#v\nFold replays %#v %#v", i, got[i], got[i].Content, w[i], w[i].Content)
			}
		}
	}
	for i, ev := range wire {
		if b := ev.Content; isText(b) && b.TextJSON != "" {
			if b.Text != "" || b.TextJSON != escapeJSON(got[i].Content.Text) || b.TextLen != len(got[i].Content.Text) {
				t.Fatalf("event %d: wire text %q (%d bytes) for %q", i, b.TextJSON, b.TextLen, got[i].Content.Text)
			}
		}
	}
	want.entries, want.n = nil, 0
	lg.entries, lg.n, lg.first, lg.spare = nil, 0, 0, nil
	if !reflect.DeepEqual(lg, want) {
		t.Fatalf("streamed log %#v\nFold's %#v", lg, want)
	}
}

func TestFoldStreamGivesWhatFoldReplays(t *testing.T) {
	var items []any
	items = append(items,
		Event{Kind: EventUserChunk, MessageID: "u1", Content: &Block{Type: BlockText, Text: "go <now> & \u2028"}, Tags: Tags{TurnID: "r1"}},
		llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}},
		// One message whose chunks split a rune, hold invalid UTF-8, escapes
		// and U+FFFD.
		chunk(EventMessageChunk, "m1", "a\xf0\x9f"), chunk(EventMessageChunk, "m1", "\x90\xa6b\"\\\n"),
		chunk(EventMessageChunk, "m1", "\ufffd\xff\x00\x1f</&>"), chunk(EventMessageChunk, "m1", "é日\u2029"),
		Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c1", Name: "read", Status: ToolPending}},
		Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c2", Name: "bash", Status: ToolPending}},
		chunk(EventThoughtChunk, "t1", "while c1 and c2 run"),
		Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c2", Status: ToolInProgress, Title: "bash x"}},
		Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c1", Status: ToolCompleted, Content: []tool.Content{textContent("ok")}}},
		Event{Kind: EventPlan, Plan: []tool.PlanEntry{{Content: "step"}}},
		Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c2", Status: ToolFailed}},
		Event{Kind: EventUsage, Usage: &Usage{Used: 5, Size: 10}},
		// An image chunk (not text) between text chunks of one message.
		Event{Kind: EventUserChunk, MessageID: "u2", Content: &Block{Type: BlockImage, MimeType: "image/png", Data: []byte{1}}},
		Event{Kind: EventUserChunk, MessageID: "u2", Content: &Block{Type: BlockText, Text: "and this"}},
		// A text chunk the hand decoder leaves to encoding/json (a title).
		Event{Kind: EventMessageChunk, MessageID: "m2", Title: "t", Content: &Block{Type: BlockText, Text: "slow <"}},
		chunk(EventMessageChunk, "m2", " path"),
		Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: "c3", Name: "read", Status: ToolInProgress}},
	)
	// Past a few blocks of entries, while c3 never finishes (interrupted)
	// and the entries after it wait for the end.
	for i := range 3 * entryBlock {
		items = append(items, chunk(EventThoughtChunk, fmt.Sprint("t", i), "th"), chunk(EventMessageChunk, fmt.Sprint("m", i), fmt.Sprint(i)))
		if i == entryBlock {
			items = append(items, Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c3", Status: ToolInProgress, Title: "still"}})
		}
	}
	items = append(items, chunk(EventMessageChunk, "m_last", "cut off"))
	checkStream(t, rowsOf(t, items...), 0)
	checkStream(t, rowsOf(t, items...), 5)
	// The same with c3 finished: entries go out while the rows are read.
	items = append(items, Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "c3", Status: ToolCompleted}},
		Event{Kind: EventUsage, Usage: &Usage{Used: 7, Size: 10}})
	checkStream(t, rowsOf(t, items...), 0)
	checkStream(t, rowsOf(t, items...), 5)
}

// FuzzFoldStream: any text cut into chunks anywhere (inside a rune, an
// invalid byte) folds and streams as Fold has it.
func FuzzFoldStream(f *testing.F) {
	f.Add("héllo 🐦 <b>&\u2028\x00\xff\ufffd", uint8(3), uint8(7))
	f.Add("\xf0\x9f\x90\xa6", uint8(1), uint8(2))
	f.Add(`\u00e9"\\/`, uint8(0), uint8(4))
	f.Fuzz(func(t *testing.T, text string, cut1, cut2 uint8) {
		a := min(int(cut1), len(text))
		b := min(max(a, int(cut2)), len(text))
		rows := rowsOf(t,
			Event{Kind: EventUserChunk, MessageID: "u1", Content: &Block{Type: BlockText, Text: text[:b]}},
			chunk(EventMessageChunk, "m1", text[:a]), chunk(EventMessageChunk, "m1", text[a:b]), chunk(EventMessageChunk, "m1", text[b:]),
			chunk(EventThoughtChunk, "t1", text[a:]), chunk(EventMessageChunk, "m2", text))
		checkStream(t, rows, 0)
		checkStream(t, rows, 4+int(cut1%8))
	})
}

// A session loaded with a replay hears the history as the log is read,
// from the store, the same as a fold of the whole log replays it.
func TestFoldStreamReadsTheStore(t *testing.T) {
	st, id := storedTurn5k(t)
	want, err := FoldStored(t.Context(), st, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	lg, err := FoldStream(t.Context(), st, id, 0, func(ev Event) {
		ev = kept(ev)
		ev.Content = ev.Content.Decoded()
		got = append(got, ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	if w := want.Replay(); len(got) != len(w) || !reflect.DeepEqual(got, w) {
		t.Fatalf("streamed %d events, Fold replays %d (or they differ)", len(got), len(w))
	}
	if len(lg.Entries()) != 0 || !reflect.DeepEqual(lg.History, want.History) || lg.LastSeq != want.LastSeq {
		t.Fatalf("streamed log: %d entries kept, history or last seq differ", len(lg.Entries()))
	}
}

// inPieces cuts each text chunk event's text as FoldStream does for
// maxText: greedily into pieces of at most maxText bytes on rune
// boundaries.
func inPieces(evs []Event, maxText int) []Event {
	if maxText == 0 {
		return evs
	}
	var out []Event
	for _, ev := range evs {
		b := ev.Content
		if !isText(b) || (ev.Kind != EventMessageChunk && ev.Kind != EventThoughtChunk && ev.Kind != EventUserChunk) {
			out = append(out, ev)
			continue
		}
		text := b.Text
		for len(text) > maxText {
			i := maxText
			for i > 0 && !utf8.RuneStart(text[i]) {
				i--
			}
			p := ev
			c := *b
			c.Text = text[:i]
			p.Content = &c
			out = append(out, p)
			text = text[i:]
		}
		c := *b
		c.Text = text
		ev.Content = &c
		out = append(out, ev)
	}
	return out
}

// kept is a replayed event with a Content of its own: FoldStream's is
// only valid until emit returns.
func kept(ev Event) Event {
	if ev.Content != nil {
		c := *ev.Content
		ev.Content = &c
	}
	return ev
}
