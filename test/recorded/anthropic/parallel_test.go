package anthropic

import (
	"fmt"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// A real parallel tool call (charmbracelet/fantasy's go-vcr cassette, see
// ../SOURCES.md): claude-sonnet-4 streams a text block and then two
// tool_use blocks (add, multiply) in one response; the second request of
// the cassette is the follow-up the real API accepted, with both tool_use
// blocks in one assistant turn and both tool_results, in order, in one
// user turn. corvid has neither tool, so both results are errors; the
// loop must still have the accepted layout.
func TestParallelToolUseBlocksGoBackInOneTurnWithAResultEach(t *testing.T) {
	t.Parallel()
	cas := replay.GoVCR(t, replay.Read(t, "fantasy-claude-sonnet-4-multi_tool_streaming.yaml"))
	if len(cas) != 2 {
		t.Fatalf("cassette has %d interactions, want 2", len(cas))
	}
	rec := blocks(t, sseEvents(cas[0].Response.Body))
	var uses []block
	for _, b := range rec {
		if b.Type == "tool_use" {
			uses = append(uses, b)
		}
	}
	if len(uses) != 2 {
		t.Fatalf("recorded stream has %d tool_use blocks, this test needs 2: %+v", len(uses), rec)
	}
	acc := messagesOf(t, cas[1].RequestBody)
	if err := loopShape(acc); err != nil || len(acc) != 3 || len(acc[2].Content) != 2 {
		t.Fatalf("accepted follow-up is not one turn of two results (%d messages): %v", len(acc), err)
	}

	r := start(t, "claude-sonnet-4-5", replay.Responses(cas)...)
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Add and multiply the number 2 and 3", "end_turn")
	ups := r.Updates(sid)

	// Each recorded tool_use is its own tool call, with its id and input.
	calls := testkit.OfKind(ups, "tool_call")
	if len(calls) != len(uses) {
		t.Fatalf("%d tool_call updates, want %d (one per recorded tool_use)", len(calls), len(uses))
	}
	for i, u := range uses {
		if calls[i].ToolCallID != u.ID {
			t.Errorf("tool_call %d id %q, recorded %q", i, calls[i].ToolCallID, u.ID)
		}
		if !jsonEqual(calls[i].RawInput, u.Input) {
			t.Errorf("tool_call %d rawInput %s, recorded input %s", i, calls[i].RawInput, u.Input)
		}
		if !finished(ups, u.ID) {
			t.Errorf("tool call %s (%s) never finished: corvid did not run it", u.ID, u.Name)
		}
	}
	final := blocks(t, sseEvents(cas[1].Response.Body))
	if got, want := testkit.TextOf(ups, "agent_message_chunk"), rec[0].Text+final[0].Text; got != want {
		t.Errorf("text %q, want the recorded %q", got, want)
	}

	reqs := r.Server.MustRequests(t, 2)
	got := messagesOf(t, reqs[1].Body)
	if err := loopShape(got); err != nil || len(got) != len(acc) {
		t.Fatalf("corvid's follow-up (%d messages, accepted %d): %v\n%s", len(got), len(acc), err, reqs[1].Body)
	}
	if len(got[1].Content) != len(rec) || len(got[1].Content) != len(acc[1].Content) {
		t.Fatalf("assistant turn has %d blocks; recorded %d, accepted %d: %v", len(got[1].Content), len(rec), len(acc[1].Content), got[1].Content)
	}
	for i := range rec {
		where := fmt.Sprintf("assistant block %d", i)
		sameBlock(t, where, got[1].Content[i], rec[i])
		sameAsAccepted(t, where, got[1].Content[i], acc[1].Content[i])
	}
	for i, res := range got[2].Content {
		if res["tool_use_id"] != acc[2].Content[i]["tool_use_id"] {
			t.Errorf("tool_result %d is for %v, the accepted one for %v", i, res["tool_use_id"], acc[2].Content[i]["tool_use_id"])
		}
		if res["is_error"] != true {
			t.Errorf("tool_result %d: is_error %v, want true (corvid has no %s tool)", i, res["is_error"], uses[i].Name)
		}
	}
}

// finished reports whether the tool call id reached a final status, in its
// tool_call (a call of an unknown tool fails at once) or a later update.
func finished(ups []testkit.Update, id string) bool {
	for _, u := range ups {
		if (u.SessionUpdate == "tool_call" || u.SessionUpdate == "tool_call_update") && u.ToolCallID == id && (u.Status == "completed" || u.Status == "failed") {
			return true
		}
	}
	return false
}
