package agent

import (
	"encoding/json"

	"github.com/corvid-agent/corvid/internal/store"
)

// TurnIDsOf gives, for each stored row, the client's id of the turn the row
// belongs to ("" when none): a prompted turn's id (TurnOptions.TurnID, e.g.
// CodeBuddy's client turn id) is stored with its prompt, the user chunks,
// and every row from that prompt to the next turn's start belongs to it. A
// drain turn (started by finished workers, without a prompt) has no such
// id, and a detached worker's events belong to no turn. `corvid sessions
// export --format jsonl` reads it.
func TurnIDsOf(rows []store.Event) []string {
	out := make([]string, len(rows))
	current := ""
	for i, r := range rows {
		switch EventKind(r.Kind) {
		case EventDrainStarted:
			current = ""
		case EventUserChunk, EventMessageChunk, EventThoughtChunk, EventToolCall, EventToolCallState, EventPlan, EventUsage, EventInfo:
			var ev Event
			if json.Unmarshal(r.Payload, &ev) != nil {
				break
			}
			switch {
			case ev.Kind == EventUserChunk:
				current = ev.TurnID
			case ev.FromWorker():
				continue // out[i] stays ""
			}
		}
		out[i] = current
	}
	return out
}
