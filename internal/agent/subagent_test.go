package agent

import (
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
)

// C31–C33: a sub-agent inherits the parent's explicit tier when its own
// model offers it; without an explicit tier it uses its model's default (not
// the parent's window); a tier its model lacks fails closed to the default.
func TestSubagentTierInheritance(t *testing.T) {
	cases := []struct {
		name   string
		parent int64
		child  []int64
		want   int64
	}{
		{"explicit tier the child supports (C31)", 1000000, []int64{200000, 1000000}, 1000000},
		{"no explicit tier: the child's default (C32)", 0, []int64{200000, 1000000}, 0},
		{"unsupported tier fails closed (C33)", 1000000, []int64{128000, 400000}, 0},
		{"single-window child model (C33)", 1000000, []int64{1000000}, 0},
	}
	for _, c := range cases {
		if got := inheritTier(c.parent, c.child); got != c.want {
			t.Errorf("%s: inheritTier(%d, %v) = %d, want %d", c.name, c.parent, c.child, got, c.want)
		}
	}
}

// A sub-agent's text in the session's log is not the session's answer: a
// crash mid-task must not put it into the parent's model context.
func TestFoldKeepsSubagentTextOutOfTheContext(t *testing.T) {
	row := func(seq int64, kind string, v any) store.Event {
		b, _ := json.Marshal(v)
		return store.Event{Seq: seq, Kind: kind, Payload: b}
	}
	user := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}}
	tagged := Event{Kind: EventMessageChunk, MessageID: "m1", Content: &Block{Type: BlockText, Text: "child says"},
		Meta: map[string]any{SubagentMeta: map[string]any{"name": "a"}, MemberEventMeta: "a"}}
	lg := Fold([]store.Event{row(1, recordContext, user), row(2, string(EventMessageChunk), tagged)})
	if len(lg.History) != 1 {
		t.Fatalf("history after a crash mid-task: %d messages, want only the prompt: %+v", len(lg.History), lg.History)
	}
	if len(lg.Entries) != 1 || lg.Entries[0].Meta[MemberEventMeta] != "a" {
		t.Errorf("the tagged chunk should replay with its tags: %+v", lg.Entries)
	}
}
