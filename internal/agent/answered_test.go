package agent

import (
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/store"
)

// Who answered a tool call's question rides on the call's next update
// that has a status (the question's outcome), once, and the event log
// keeps it on the call's final state, so a replay shows it.
func TestAnsweredRidesOnTheCallsNextStatusAndIsReplayed(t *testing.T) {
	c := newConversation("sess_a", nil, nil, nil)
	by := Answerer{Name: "client-b", Title: "Client B", Version: "2.0"}
	c.noteAnswer("call_1", by)
	progress := c.withAnswerer(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "call_1"}})
	other := c.withAnswerer(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "call_2", Status: ToolInProgress}})
	outcome := c.withAnswerer(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "call_1", Status: ToolInProgress}})
	after := c.withAnswerer(Event{Kind: EventToolCallState, ToolCall: &ToolCall{ID: "call_1", Status: ToolCompleted}})
	if progress.ToolCall.AnsweredBy != nil || other.ToolCall.AnsweredBy != nil || after.ToolCall.AnsweredBy != nil {
		t.Fatalf("answeredBy on the wrong update: %+v %+v %+v", progress.ToolCall, other.ToolCall, after.ToolCall)
	}
	if outcome.ToolCall.AnsweredBy == nil || *outcome.ToolCall.AnsweredBy != by {
		t.Fatalf("the outcome update carries %+v; want %+v", outcome.ToolCall.AnsweredBy, by)
	}

	var rows []store.Event
	for _, ev := range []Event{
		{Kind: EventToolCall, ToolCall: &ToolCall{ID: "call_1", Name: "write", Title: "Write notes.txt", Status: ToolPending}},
		outcome, after,
	} {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, store.Event{Seq: int64(len(rows) + 1), Kind: string(ev.Kind), Payload: b})
	}
	replay := Fold(rows).Replay()
	final := replay[len(replay)-1].ToolCall
	if final == nil || final.Status != ToolCompleted || final.AnsweredBy == nil || *final.AnsweredBy != by {
		t.Fatalf("the replayed final state: %+v; want completed, answered by %+v", final, by)
	}
}
