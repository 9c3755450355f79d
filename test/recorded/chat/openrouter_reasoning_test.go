package chat

import (
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// TestOpenRouterGemini3ReasoningDetailsGoBackWithTheToolCall replays a real
// OpenRouter stream of google/gemini-3-pro-preview (charmbracelet/fantasy's
// cassette, see ../SOURCES-openai.md): reasoning text, then a
// "reasoning.encrypted" entry of delta.reasoning_details (Gemini's thought
// signature, tied to the call's id), then a weather tool call. Gemini 3
// refuses a function call whose thought signature does not come back
// (ai.google.dev/gemini-api/docs/thought-signatures), and OpenRouter
// carries it in reasoning_details, which its docs ask clients to send back
// unmodified on the assistant message (openrouter.ai/docs, "Preserving
// reasoning blocks"). The cassette's second request is the follow-up
// OpenRouter accepted: the assistant message with the tool call and
// reasoning_details (the text entries of one index joined, then the
// encrypted entry as streamed). corvid's must carry the same.
func TestOpenRouterGemini3ReasoningDetailsGoBackWithTheToolCall(t *testing.T) {
	cas := replay.GoVCR(t, replay.Read(t, "fantasy-gemini-3-pro-preview-openrouter-thinking-streaming.yaml"))
	if len(cas) != 2 {
		t.Fatalf("cassette has %d interactions, want 2", len(cas))
	}
	rec := readRecording(t, sseChunks(cas[0].Response.Body))
	answer := readRecording(t, sseChunks(cas[1].Response.Body)).text
	var acc replay.Request
	acc.Body = cas[1].RequestBody
	accAsst := replay.Where(acc.Items(t, "messages"), "role", "assistant")
	if len(accAsst) != 1 || accAsst[0]["reasoning_details"] == nil || len(rec.calls) != 1 {
		t.Fatalf("the cassette is not one tool call followed by an accepted follow-up with reasoning_details: %s", acc.Body)
	}

	more := replay.ChatChunks(replay.Read(t, "mistral-text.chunks.txt"))
	srv := replay.New(t, append(replay.Responses(cas), more)...)
	c := replay.Open(t, preset("openrouter", "google/gemini-3-pro-preview"), srv, nil)
	c.MustPrompt(t, c.SID, "What's the weather in Florence, Italy?", "end_turn")
	ups := c.Updates(c.SID)
	if got := testkit.TextOf(ups, "agent_thought_chunk"); got != rec.reasoning {
		t.Errorf("thought chunks %q, want the recorded reasoning %q", got, rec.reasoning)
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != answer {
		t.Errorf("message %q, want the recorded %q", got, answer)
	}
	calls := testkit.OfKind(ups, "tool_call")
	if len(calls) != 1 || calls[0].ToolCallID != rec.calls[0].id || !finished(ups, rec.calls[0].id) {
		t.Fatalf("tool_call updates %+v, want one for %s that finished", calls, rec.calls[0].id)
	}

	reqs := srv.MustRequests(t, 2)
	a := checkToolFollowUp(t, reqs[1], rec)
	var got, want any
	_ = json.Unmarshal([]byte(js(a["reasoning_details"])), &got)
	_ = json.Unmarshal([]byte(js(accAsst[0]["reasoning_details"])), &want)
	if js(got) != js(want) {
		t.Errorf("follow-up assistant reasoning_details\n %s\nthe accepted follow-up's\n %s", js(got), js(want))
	}
	validateMessages(t, reqs[1])

	// The details are part of the session: after session/load the history
	// sent with the next prompt still carries them.
	c.MustCall(c.Ctx, "session/load", map[string]any{"sessionId": c.SID, "cwd": c.Workspace, "mcpServers": []any{}}, nil)
	c.MustPrompt(t, c.SID, "And tomorrow?", "end_turn")
	third := srv.MustRequests(t, 3)[2]
	var again any
	for _, m := range replay.Where(third.Items(t, "messages"), "role", "assistant") {
		if m["tool_calls"] != nil {
			_ = json.Unmarshal([]byte(js(m["reasoning_details"])), &again)
		}
	}
	if js(again) != js(want) {
		t.Errorf("after session/load the assistant message's reasoning_details are\n %s\nwant\n %s", js(again), js(want))
	}
}
