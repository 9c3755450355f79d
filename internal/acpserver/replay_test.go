package acpserver

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
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
