package acpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/tool"
)

// framesOf runs send on a session of a server whose connection writes to
// a buffer, and returns what the connection wrote.
func framesOf(t *testing.T, messagesHost bool, send func(ss *session)) []byte {
	t.Helper()
	pr, pw := io.Pipe()
	var out bytes.Buffer
	s := &Server{sessions: map[string]*session{}}
	s.messagesHost.Store(messagesHost)
	s.conn = acp.NewConn(pr, &out, s, acp.Options{})
	done := make(chan error, 1)
	go func() { done <- s.conn.Serve(t.Context(), time.Second) }()
	send(&session{srv: s, id: "sess_replay"})
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// replayReference sends what a replay must send for ev: the frames a live
// turn's emit sends, except that a host that prompts with messages gets
// each row's whole text as top-level content (live text is line-buffered
// across chunks, gascitylines.go, and a stored row is a whole message).
func (ss *session) replayReference(ev agent.Event, turn map[string]any) {
	if !ss.srv.messagesHost.Load() {
		ss.emit(ev, turn)
		return
	}
	for _, u := range ss.srv.updatesFor(ev) {
		_ = ss.srv.conn.NotifyIf("session/update", ss.srv.notification(ss.id, withTurnMeta(u, turn)), ev.Stored)
	}
	if ev.Kind == agent.EventMode {
		_ = ss.srv.conn.Notify("session/update", ss.srv.notification(ss.id, acp.ConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: ss.srv.configOptionsFor(ss.Controls())}))
	}
}

// A replay written in runs (session/load) sends exactly the frames the
// update-by-update path (a live turn's) sends for the same events.
func TestReplayRunSendsTheFramesEmitSends(t *testing.T) {
	turn := map[string]any{metaConversationRequestID: "req_1"}
	long := strings.Repeat("long <text> & \u2028 ", 6000) // over maxTextBytes: split
	var events []agent.Event
	text := func(kind agent.EventKind, id, s string, tags agent.Tags) agent.Event {
		return agent.Event{Kind: kind, MessageID: id, Content: &agent.Block{Type: agent.BlockText, Text: s}, Tags: tags}
	}
	none := agent.Tags{}
	events = append(events,
		text(agent.EventUserChunk, "user_1", "hi <there> & \"you\"\n", agent.Tags{TurnID: "req_1"}),
		text(agent.EventThoughtChunk, "thought_1", "hm\x00\xff", none),
		text(agent.EventMessageChunk, "msg_1", long, none),
		text(agent.EventMessageChunk, "", "no id", none),
		text(agent.EventMessageChunk, "msg_2", "own meta", agent.Tags{Member: &agent.Member{ID: "sub_1", Name: "m", ParentToolCallID: "t1", Depth: 1}}),
		text(agent.EventMessageChunk, "msg_3", "tagged twice", agent.Tags{TurnID: "req_2", Member: &agent.Member{ID: "sub_2", Name: "w", Depth: 2, Background: true}}),
		agent.Event{Kind: agent.EventMessageChunk, MessageID: "msg_4", Content: &agent.Block{Type: agent.BlockImage, MimeType: "image/png", Data: []byte{1, 2}}},
		agent.Event{Kind: agent.EventToolCall, ToolCall: &agent.ToolCall{ID: "c1", Name: "read", Title: "Read a", Kind: tool.KindRead, Status: agent.ToolPending}},
		agent.Event{Kind: agent.EventToolCallState, ToolCall: &agent.ToolCall{ID: "c1", Status: agent.ToolCompleted}},
		agent.Event{Kind: agent.EventPlan, Plan: []tool.PlanEntry{{Content: "step", Status: "pending"}}},
		agent.Event{Kind: agent.EventUsage, Usage: &agent.Usage{Used: 5, Size: 10}},
		agent.Event{Kind: agent.EventInfo, Title: "t"},
		agent.Event{Kind: agent.EventTeam, Tags: agent.Tags{Team: agent.TeamUpdate{"type": "team_created", "teamName": "t"}}},
		agent.Event{Kind: agent.EventDrainStarted, Tags: agent.Tags{Drain: &agent.Drain{RequestID: "r", Reason: agent.DrainReason}}},
		agent.Event{Kind: agent.EventDrainEnded, Tags: agent.Tags{Drain: &agent.Drain{RequestID: "r", StopReason: "end_turn"}}},
	)
	for range 3000 { // more than one run buffer
		events = append(events, text(agent.EventThoughtChunk, "thought_2", "y", none), text(agent.EventMessageChunk, "msg_5", "x", none))
	}
	for _, messagesHost := range []bool{false, true} {
		for _, tagged := range []map[string]any{nil, turn} {
			want := framesOf(t, messagesHost, func(ss *session) {
				for _, ev := range events {
					ss.replayReference(ev, tagged)
				}
			})
			got := framesOf(t, messagesHost, func(ss *session) {
				run := ss.srv.conn.NewRun()
				for _, ev := range events {
					ss.replay(run, ev, tagged)
				}
				if err := run.Flush(); err != nil {
					t.Fatal(err)
				}
			})
			if n := bytes.Count(want, []byte("\n")); n < len(events) {
				t.Fatalf("the emit path wrote %d frames for %d events", n, len(events))
			}
			sameFrames(t, got, want, fmt.Sprintf("messagesHost %v, turn %v", messagesHost, tagged))
		}
	}
}

// storedRows stores events as one session's rows, as the event log writes
// them (json.Marshal), one row each.
func storedRows(t *testing.T, events []agent.Event) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir() + "/s.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	appendSession(t, st, "s1", events)
	return st
}

// appendSession stores events as session sid of st.
func appendSession(t *testing.T, st *store.Store, sid string, events []agent.Event) {
	t.Helper()
	if err := st.CreateSession(t.Context(), store.Session{ID: sid, Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Append(sid, string(ev.Kind), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// checkStoredReplay: session/load's replay (the rows streamed, text copied
// in wire form) writes exactly the frames the update-by-update path writes
// for the folded log's events.
func checkStoredReplay(t *testing.T, st *store.Store, sid string) {
	t.Helper()
	lg, err := agent.FoldStored(t.Context(), st, sid)
	if err != nil {
		t.Fatal(err)
	}
	turn := map[string]any{metaConversationRequestID: "req_1"}
	for _, messagesHost := range []bool{false, true} {
		for _, tagged := range []map[string]any{nil, turn} {
			want := framesOf(t, messagesHost, func(ss *session) {
				for ev := range lg.Replayed() {
					ss.replayReference(ev, tagged)
				}
			})
			got := framesOf(t, messagesHost, func(ss *session) {
				run := ss.srv.conn.NewRun()
				if _, err := agent.FoldStream(t.Context(), st, sid, maxTextBytes, func(ev agent.Event) { ss.replay(run, ev, tagged) }); err != nil {
					t.Fatal(err)
				}
				if err := run.Flush(); err != nil {
					t.Fatal(err)
				}
			})
			sameFrames(t, got, want, fmt.Sprintf("messagesHost %v, turn %v", messagesHost, tagged))
		}
	}
}

// sameFrames fails t, naming the first differing frame, unless got and
// want hold the same frames.
func sameFrames(t *testing.T, got, want []byte, what string) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range min(len(wl), len(gl)) {
		if !bytes.Equal(wl[i], gl[i]) {
			t.Fatalf("%s: frame %d differs:\n got %.300s\nwant %.300s", what, i, gl[i], wl[i])
		}
	}
	t.Fatalf("%s: %d frames, want %d", what, len(gl), len(wl))
}

func textEvent(kind agent.EventKind, id, s string) agent.Event {
	return agent.Event{Kind: kind, MessageID: id, Content: &agent.Block{Type: agent.BlockText, Text: s}}
}

func TestStoredReplaySendsTheFramesEmitSends(t *testing.T) {
	long := strings.Repeat("long <text> & \u2028 é", 2000)
	events := []agent.Event{
		{Kind: agent.EventUserChunk, MessageID: "user_1", Content: &agent.Block{Type: agent.BlockText, Text: "hi <there> & \"you\"\n"},
			Tags: agent.Tags{TurnID: "req_1"}},
		// A message whose chunks cut runes, hold invalid UTF-8 (stored as
		// \ufffd), control characters and the escapes encoders differ on.
		textEvent(agent.EventMessageChunk, "msg_1", "a\xf0\x9f"), textEvent(agent.EventMessageChunk, "msg_1", "\x90\xa6b\x00\x7f/"),
		textEvent(agent.EventMessageChunk, "msg_1", "\ufffd\xff\u2028\u2029\b\f"),
		textEvent(agent.EventThoughtChunk, "thought_1", "hm"),
		// Over maxTextBytes once merged: split by the emit path.
		textEvent(agent.EventMessageChunk, "msg_2", long), textEvent(agent.EventMessageChunk, "msg_2", long),
		textEvent(agent.EventMessageChunk, "msg_2", long),
		{Kind: agent.EventToolCall, ToolCall: &agent.ToolCall{ID: "c1", Name: "read", Title: "Read a", Kind: tool.KindRead, Status: agent.ToolPending}},
		textEvent(agent.EventThoughtChunk, "thought_2", "waiting"),
		{Kind: agent.EventToolCallState, ToolCall: &agent.ToolCall{ID: "c1", Status: agent.ToolCompleted}},
		{Kind: agent.EventMessageChunk, MessageID: "msg_3", Content: &agent.Block{Type: agent.BlockText, Text: "own meta"}, Tags: agent.Tags{Member: &agent.Member{ID: "sub_1", Name: "m", Depth: 1}}},
		{Kind: agent.EventPlan, Plan: []tool.PlanEntry{{Content: "step", Status: "pending"}}},
		{Kind: agent.EventUsage, Usage: &agent.Usage{Used: 5, Size: 10}},
	}
	for i := range 3000 { // more than one run buffer, and several blocks of entries
		events = append(events, textEvent(agent.EventThoughtChunk, fmt.Sprint("t", i), "y"), textEvent(agent.EventMessageChunk, fmt.Sprint("m", i), "x<"))
	}
	checkStoredReplay(t, storedRows(t, events), "s1")
}

// FuzzStoredReplay: any text, cut into chunks anywhere, replays from the
// store as the emit path sends it.
func FuzzStoredReplay(f *testing.F) {
	f.Add("héllo 🐦 <b>&\u2028\x00\xff\ufffd", uint8(3), uint8(7))
	f.Add("\xf0\x9f\x90\xa6\xf0\x9f", uint8(1), uint8(5))
	// One store for every input, a session each: opening a database per
	// input made each run slow enough that the engine often stopped
	// mid-minimisation at -fuzztime ("context deadline exceeded").
	st, err := store.Open(f.TempDir() + "/s.db")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, text string, cut1, cut2 uint8) {
		a := min(int(cut1), len(text))
		b := min(max(a, int(cut2)), len(text))
		sid := fmt.Sprintf("s%d", n.Add(1))
		appendSession(t, st, sid, []agent.Event{
			textEvent(agent.EventUserChunk, "u1", text),
			textEvent(agent.EventMessageChunk, "m1", text[:a]), textEvent(agent.EventMessageChunk, "m1", text[a:b]),
			textEvent(agent.EventMessageChunk, "m1", text[b:]), textEvent(agent.EventThoughtChunk, "t1", text[a:]),
		})
		checkStoredReplay(t, st, sid)
	})
}

// BenchmarkStoredReplay measures session/load's replay in process, from the
// store's rows to the connection's writer (io.Discard): "decoded" folds
// the whole log with decoded text and encodes it again (the path before
// FoldStream), "wire" streams the rows and copies their text as stored.
// The log: 5,000 chunk rows alternating between thinking and text (5,000
// updates), then one message of 5,000 chunk rows of 40 bytes of prose
// with HTML characters and non-ASCII letters.
func BenchmarkStoredReplay(b *testing.B) {
	st, err := store.Open(b.TempDir() + "/s.db")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(b.Context(), store.Session{ID: "s1", Cwd: "/w"}); err != nil {
		b.Fatal(err)
	}
	add := func(ev agent.Event) {
		p, _ := json.Marshal(ev)
		if err := st.Append("s1", string(ev.Kind), p); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 5000 {
		kind := agent.EventThoughtChunk
		if i%2 == 1 {
			kind = agent.EventMessageChunk
		}
		add(textEvent(kind, fmt.Sprint("m", i/2), fmt.Sprint(i%10)))
	}
	for range 5000 {
		add(textEvent(agent.EventMessageChunk, "long", "Le café <b>ouvert</b> & fermé — vite.\n"))
	}
	if err := st.Flush(b.Context()); err != nil {
		b.Fatal(err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	s := &Server{sessions: map[string]*session{}}
	s.conn = acp.NewConn(pr, io.Discard, s, acp.Options{})
	go func() { _ = s.conn.Serve(context.Background(), time.Second) }()
	ss := &session{srv: s, id: "sess_replay"}
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			run := s.conn.NewRun()
			lg, err := agent.FoldStored(b.Context(), st, "s1")
			if err != nil {
				b.Fatal(err)
			}
			for ev := range lg.Replayed() {
				ss.replay(run, ev, nil)
			}
			_ = run.Flush()
		}
	})
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			run := s.conn.NewRun()
			if _, err := agent.FoldStream(b.Context(), st, "s1", maxTextBytes, func(ev agent.Event) { ss.replay(run, ev, nil) }); err != nil {
				b.Fatal(err)
			}
			_ = run.Flush()
		}
	})
}

// FuzzSplitWire: splitWire cuts a text's wire form where splitText cuts
// the text.
func FuzzSplitWire(f *testing.F) {
	f.Add("héllo 🐦 <b>&\u2028\x00\xff\ufffd\n\"", uint8(3))
	f.Add("\u2029\u2029\u2029", uint8(2))
	f.Fuzz(func(t *testing.T, text string, max uint8) {
		if max < 4 {
			return // below a rune's length splitText may cut an empty piece
		}
		dec := strings.ToValidUTF8(text, "\uFFFD") // what a stored text decodes to
		enc, _ := json.Marshal(dec)
		var want []string
		for _, p := range splitText(dec, int(max)) {
			e, _ := json.Marshal(p)
			want = append(want, string(e[1:len(e)-1]))
		}
		got := splitWire(string(enc[1:len(enc)-1]), len(dec), int(max))
		if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(want) {
			t.Fatalf("splitWire(%q, %d) = %q, want %q", enc, max, got, want)
		}
	})
}
