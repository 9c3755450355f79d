package agent

import (
	"fmt"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
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
	turn := map[string]any{"codebuddy.ai/conversationRequestId": "01a2345c3c1c74edb80ef04b04e36552"}
	l.event(Event{Kind: EventUserChunk, MessageID: "user_1", Content: &Block{Type: BlockText, Text: "go"}, Meta: turn})
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
	l.event(Event{Kind: EventInfo, Meta: map[string]any{"stopReason": "end_turn"}})
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
