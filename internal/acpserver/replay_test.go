package acpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
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

// A replay written in runs (session/load) sends exactly the frames the
// update-by-update path (a live turn's) sends for the same events.
func TestReplayRunSendsTheFramesEmitSends(t *testing.T) {
	turn := map[string]any{metaConversationRequestID: "req_1"}
	long := strings.Repeat("long <text> & \u2028 ", 6000) // over maxTextBytes: split
	var events []agent.Event
	text := func(kind agent.EventKind, id, s string, meta map[string]any) agent.Event {
		return agent.Event{Kind: kind, MessageID: id, Content: &agent.Block{Type: agent.BlockText, Text: s}, Meta: meta}
	}
	events = append(events,
		text(agent.EventUserChunk, "user_1", "hi <there> & \"you\"\n", map[string]any{metaConversationRequestID: "req_1", "other": "x"}),
		text(agent.EventThoughtChunk, "thought_1", "hm\x00\xff", nil),
		text(agent.EventMessageChunk, "msg_1", long, nil),
		text(agent.EventMessageChunk, "", "no id", nil),
		text(agent.EventMessageChunk, "msg_2", "own meta", map[string]any{"corvid/final": true}),
		text(agent.EventMessageChunk, "msg_3", "string meta", map[string]any{"z": "1", "a": "2"}),
		agent.Event{Kind: agent.EventMessageChunk, MessageID: "msg_4", Content: &agent.Block{Type: agent.BlockImage, MimeType: "image/png", Data: []byte{1, 2}}},
		agent.Event{Kind: agent.EventToolCall, ToolCall: &agent.ToolCall{ID: "c1", Name: "read", Title: "Read a", Kind: tool.KindRead, Status: agent.ToolPending}},
		agent.Event{Kind: agent.EventToolCallState, ToolCall: &agent.ToolCall{ID: "c1", Status: agent.ToolCompleted}},
		agent.Event{Kind: agent.EventPlan, Plan: []tool.PlanEntry{{Content: "step", Status: "pending"}}},
		agent.Event{Kind: agent.EventUsage, Usage: &agent.Usage{Used: 5, Size: 10}},
		agent.Event{Kind: agent.EventInfo, Title: "t", Meta: map[string]any{"stopReason": "end_turn"}},
	)
	for range 3000 { // more than one run buffer
		events = append(events, text(agent.EventThoughtChunk, "thought_2", "y", nil), text(agent.EventMessageChunk, "msg_5", "x", nil))
	}
	for _, messagesHost := range []bool{false, true} {
		for _, tagged := range []map[string]any{nil, turn} {
			want := framesOf(t, messagesHost, func(ss *session) {
				for _, ev := range events {
					ss.emit(ev, tagged)
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
			if !bytes.Equal(got, want) {
				wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
				for i := range min(len(wl), len(gl)) {
					if !bytes.Equal(wl[i], gl[i]) {
						t.Fatalf("messagesHost %v, turn %v: frame %d differs:\n got %.300s\nwant %.300s", messagesHost, tagged, i, gl[i], wl[i])
					}
				}
				t.Fatalf("messagesHost %v, turn %v: %d frames, want %d", messagesHost, tagged, len(gl), len(wl))
			}
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
	if err := st.CreateSession(t.Context(), store.Session{ID: "s1", Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Append("s1", string(ev.Kind), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st
}

// checkStoredReplay: session/load's replay (the rows streamed, text copied
// in wire form) writes exactly the frames the update-by-update path writes
// for the folded log's events.
func checkStoredReplay(t *testing.T, st *store.Store) {
	t.Helper()
	lg, err := agent.FoldStored(t.Context(), st, "s1")
	if err != nil {
		t.Fatal(err)
	}
	turn := map[string]any{metaConversationRequestID: "req_1"}
	for _, messagesHost := range []bool{false, true} {
		for _, tagged := range []map[string]any{nil, turn} {
			want := framesOf(t, messagesHost, func(ss *session) {
				for ev := range lg.Replayed() {
					ss.emit(ev, tagged)
				}
			})
			got := framesOf(t, messagesHost, func(ss *session) {
				run := ss.srv.conn.NewRun()
				if _, err := agent.FoldStream(t.Context(), st, "s1", func(ev agent.Event) { ss.replay(run, ev, tagged) }); err != nil {
					t.Fatal(err)
				}
				if err := run.Flush(); err != nil {
					t.Fatal(err)
				}
			})
			if !bytes.Equal(got, want) {
				wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
				for i := range min(len(wl), len(gl)) {
					if !bytes.Equal(wl[i], gl[i]) {
						t.Fatalf("messagesHost %v, turn %v: frame %d differs:\n got %.300s\nwant %.300s", messagesHost, tagged, i, gl[i], wl[i])
					}
				}
				t.Fatalf("messagesHost %v, turn %v: %d frames, want %d", messagesHost, tagged, len(gl), len(wl))
			}
		}
	}
}

func textEvent(kind agent.EventKind, id, s string) agent.Event {
	return agent.Event{Kind: kind, MessageID: id, Content: &agent.Block{Type: agent.BlockText, Text: s}}
}

func TestStoredReplaySendsTheFramesEmitSends(t *testing.T) {
	long := strings.Repeat("long <text> & \u2028 é", 2000)
	events := []agent.Event{
		{Kind: agent.EventUserChunk, MessageID: "user_1", Content: &agent.Block{Type: agent.BlockText, Text: "hi <there> & \"you\"\n"},
			Meta: map[string]any{metaConversationRequestID: "req_1", "other": "x"}},
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
		{Kind: agent.EventMessageChunk, MessageID: "msg_3", Content: &agent.Block{Type: agent.BlockText, Text: "own meta"}, Meta: map[string]any{"corvid/final": true}},
		{Kind: agent.EventPlan, Plan: []tool.PlanEntry{{Content: "step", Status: "pending"}}},
		{Kind: agent.EventUsage, Usage: &agent.Usage{Used: 5, Size: 10}},
	}
	for i := range 3000 { // more than one run buffer, and several blocks of entries
		events = append(events, textEvent(agent.EventThoughtChunk, fmt.Sprint("t", i), "y"), textEvent(agent.EventMessageChunk, fmt.Sprint("m", i), "x<"))
	}
	checkStoredReplay(t, storedRows(t, events))
}

// FuzzStoredReplay: any text, cut into chunks anywhere, replays from the
// store as the emit path sends it.
func FuzzStoredReplay(f *testing.F) {
	f.Add("héllo 🐦 <b>&\u2028\x00\xff\ufffd", uint8(3), uint8(7))
	f.Add("\xf0\x9f\x90\xa6\xf0\x9f", uint8(1), uint8(5))
	f.Fuzz(func(t *testing.T, text string, cut1, cut2 uint8) {
		a := min(int(cut1), len(text))
		b := min(max(a, int(cut2)), len(text))
		checkStoredReplay(t, storedRows(t, []agent.Event{
			textEvent(agent.EventUserChunk, "u1", text),
			textEvent(agent.EventMessageChunk, "m1", text[:a]), textEvent(agent.EventMessageChunk, "m1", text[a:b]),
			textEvent(agent.EventMessageChunk, "m1", text[b:]), textEvent(agent.EventThoughtChunk, "t1", text[a:]),
		}))
	})
}
