package agent

import (
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/store/retype"
)

// The store's migration (retype.Row) writes the rows this package writes:
// a row it converts decodes to the typed event, and encoding that event
// again gives the converted bytes back, so converted rows and new rows have
// one format (and the chunk decoder's fast path takes both).
func TestRetypedRowsAreWhatTheLogWrites(t *testing.T) {
	for _, c := range []struct {
		kind, old string
		want      Event
	}{
		{"user_message_chunk", `{"kind":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"go"},"meta":{"codebuddy.ai/conversationRequestId":"0198a"}}`,
			Event{Kind: EventUserChunk, MessageID: "u1", Content: &Block{Type: BlockText, Text: "go"}, Tags: Tags{TurnID: "0198a"}}},
		{"agent_message_chunk", `{"kind":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"},"meta":{"codebuddy.ai/memberEvent":"a","corvid.dev/finalOutput":{"format":"md"},"corvid.dev/subagent":{"depth":1,"id":"sub_1","name":"a","parentToolCallId":"t1"}}}`,
			Event{Kind: EventMessageChunk, MessageID: "m", Content: &Block{Type: BlockText, Text: "x"}, Tags: Tags{Member: &Member{ID: "sub_1", Name: "a", ParentToolCallID: "t1", Depth: 1}, FinalOutput: &FinalOutputTag{Format: "md"}}}},
		{"usage_update", `{"kind":"usage_update","usage":{"used":1,"size":2},"meta":{"corvid.dev/subagentUsage":{"inputTokens":3,"outputTokens":4}}}`,
			Event{Kind: EventUsage, Usage: &Usage{Used: 1, Size: 2}, Tags: Tags{SubagentUsage: &TokenTotals{InputTokens: 3, OutputTokens: 4}}}},
		{"session_info_update", `{"kind":"session_info_update","meta":{"codebuddy.ai/teamUpdate":{"teamName":"t","type":"team_created"}}}`,
			Event{Kind: EventTeam, Tags: Tags{Team: TeamUpdate{"teamName": "t", "type": "team_created"}}}},
		{"session_info_update", `{"kind":"session_info_update","meta":{"codebuddy.ai/requestId":"r","codebuddy.ai/unsolicitedTurn":{"reason":"background_drain","requestId":"r"}}}`,
			Event{Kind: EventDrainStarted, Tags: Tags{Drain: &Drain{RequestID: "r", Reason: DrainReason}}}},
		{"session_info_update", `{"kind":"session_info_update","meta":{"codebuddy.ai/requestId":"r","codebuddy.ai/sessionEnd":{"requestId":"r","stopReason":"end_turn"}}}`,
			Event{Kind: EventDrainEnded, Tags: Tags{Drain: &Drain{RequestID: "r", StopReason: "end_turn"}}}},
	} {
		kind, got, changed := retype.Row(c.kind, []byte(c.old))
		want, err := json.Marshal(c.want)
		if err != nil {
			t.Fatal(err)
		}
		if !changed || kind != string(c.want.Kind) || string(got) != string(want) {
			t.Errorf("retype.Row(%s) = %s %s; the log writes %s %s", c.old, kind, got, c.want.Kind, want)
		}
		var d rowDecoder
		var ev Event
		if c.want.Content != nil && !d.chunk(got, &ev) {
			t.Errorf("the chunk decoder refused the retyped row %s", got)
		}
	}
}
