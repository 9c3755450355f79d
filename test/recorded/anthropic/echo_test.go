package anthropic

import (
	"fmt"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// A real tool loop with extended thinking (charmbracelet/fantasy's
// cassette, see ../SOURCES.md): claude-sonnet-4 streams a signed thinking
// block and a tool_use (weather); the cassette's second request is the
// follow-up the real API accepted, whose assistant turn is that thinking
// block (thinking text and signature, unmodified) and the tool_use, then
// the tool_result. Anthropic's documented rule: within a tool loop the
// last assistant turn's thinking blocks must come back complete and
// unmodified. corvid's follow-up must match the accepted assistant turn
// block for block. On the next prompt the earlier turns' thinking blocks
// go back unmodified too (the API ignores them for models before Opus 4.5
// and keeps them from Opus 4.5 on; either way they must be intact).
func TestThinkingBlockGoesBackInTheToolLoopAsAccepted(t *testing.T) {
	t.Parallel()
	cas := replay.GoVCR(t, replay.Read(t, "fantasy-claude-sonnet-4-thinking-streaming.yaml"))
	if len(cas) != 2 {
		t.Fatalf("cassette has %d interactions, want 2", len(cas))
	}
	rec := blocks(t, sseEvents(cas[0].Response.Body))
	if len(rec) < 2 || rec[0].Type != "thinking" || rec[0].Signature == "" || rec[len(rec)-1].Type != "tool_use" {
		t.Fatalf("recorded stream %+v: this test needs a signed thinking block, then a tool_use", rec)
	}
	acc := messagesOf(t, cas[1].RequestBody)
	if err := loopShape(acc); err != nil || len(acc) != 3 || len(acc[1].Content) != len(rec) || acc[1].Content[0]["type"] != "thinking" {
		t.Fatalf("accepted follow-up is not the recorded turn and its result: %v\n%s", err, cas[1].RequestBody)
	}

	r := start(t, "claude-sonnet-4-0", append(replay.Responses(cas), chunks(t, "anthropic-text.chunks.txt"))...)
	sid := r.Ready(t)
	r.SetThought(t, "medium")
	r.MustPrompt(t, sid, "What's the weather in Florence, Italy?", "end_turn")
	if got := testkit.TextOf(r.Updates(sid), "agent_thought_chunk"); got != rec[0].Thinking {
		t.Errorf("thought chunks %q, want the recorded thinking %q", got, rec[0].Thinking)
	}

	reqs := r.Server.MustRequests(t, 2)
	got := messagesOf(t, reqs[1].Body)
	if err := loopShape(got); err != nil || len(got) != len(acc) {
		t.Fatalf("corvid's follow-up (%d messages, accepted %d): %v\n%s", len(got), len(acc), err, reqs[1].Body)
	}
	if len(got[1].Content) != len(acc[1].Content) {
		t.Fatalf("assistant turn has %d blocks, the accepted one %d: %v", len(got[1].Content), len(acc[1].Content), got[1].Content)
	}
	for i := range rec {
		where := fmt.Sprintf("assistant block %d", i)
		sameBlock(t, where, got[1].Content[i], rec[i])
		sameAsAccepted(t, where, got[1].Content[i], acc[1].Content[i])
	}
	if got[2].Content[0]["tool_use_id"] != acc[2].Content[0]["tool_use_id"] {
		t.Errorf("tool_result for %v, the accepted one for %v", got[2].Content[0]["tool_use_id"], acc[2].Content[0]["tool_use_id"])
	}

	r.MustPrompt(t, sid, "And tomorrow?", "end_turn")
	next := messagesOf(t, r.Server.MustRequests(t, 3)[2].Body)
	if len(next) < 4 || next[1].Role != "assistant" || len(next[1].Content) != len(rec) {
		t.Fatalf("next turn's request does not start with the tool loop as sent: %+v", next)
	}
	sameBlock(t, "next turn, thinking block", next[1].Content[0], rec[0])
}
