package agent

import (
	"encoding/json"

	"github.com/corvid-agent/corvid/internal/store"
)

// TurnMetaOf gives, for each stored row, the value of the _meta key key of
// the turn the row belongs to ("" when none): a prompted turn's _meta
// (TurnOptions.Meta, e.g. CodeBuddy's client turn id) is stored with its
// prompt, the user chunks, and every row from that prompt to the next
// turn's start belongs to it. A drain turn (started by finished workers,
// without a prompt) has no such _meta, and a detached worker's events
// belong to no turn. `corvid sessions export --format jsonl` reads it.
func TurnMetaOf(rows []store.Event, key string) []string {
	out := make([]string, len(rows))
	current := ""
	for i, r := range rows {
		switch EventKind(r.Kind) {
		case EventUserChunk, EventMessageChunk, EventThoughtChunk, EventToolCall, EventToolCallState, EventPlan, EventUsage, EventInfo:
			var ev Event
			if json.Unmarshal(r.Payload, &ev) != nil {
				break
			}
			switch {
			case ev.Kind == EventUserChunk:
				current, _ = ev.Meta[key].(string)
			case ev.Meta[UnsolicitedTurnMeta] != nil:
				current = ""
			case IsWorkerEvent(ev.Meta):
				continue // out[i] stays ""
			}
		}
		out[i] = current
	}
	return out
}
