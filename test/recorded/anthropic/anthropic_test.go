package anthropic

import (
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

func TestTextStreamsAndUsageIsReported(t *testing.T) {
	t.Parallel()
	raw := replay.Read(t, "anthropic-text.chunks.txt")
	want := blocks(t, chunkEvents(raw))
	r := start(t, "claude-sonnet-4-5", chunks(t, "anthropic-text.chunks.txt"))
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Hello", "end_turn")
	ups := r.Updates(sid)
	if got := testkit.TextOf(ups, "agent_message_chunk"); len(want) != 1 || got != want[0].Text {
		t.Errorf("text %q, recorded %+v", got, want)
	}
	// message_start says input 12 (no cache); message_delta the output.
	used, size, _ := replay.UsedOfLastUsage(t, ups)
	if used <= 12 || size != 200000 {
		t.Errorf("usage used %d of %d, want the recorded input 12 + output, of 200000", used, size)
	}
	req := r.Server.Requests()[0]
	if req.Path != "/v1/messages" || req.Header.Get("X-Api-Key") != replay.Keys["ANTHROPIC_API_KEY"] || req.Header.Get("Anthropic-Version") == "" {
		t.Errorf("request %s, headers %v", req.Path, req.Header)
	}
	if b := decode(t, req.Body); !b.Stream || b.Model != "claude-sonnet-4-5" {
		t.Errorf("request body: %s", req.Body)
	}
}

// The recorded thinking block (text and signature) goes back unmodified
// before the answer in the next request.
func TestThinkingStreamsAndGoesBackUnmodified(t *testing.T) {
	t.Parallel()
	rec := blocks(t, chunkEvents(replay.Read(t, "anthropic-clear-thinking.1.chunks.txt")))
	r := start(t, "claude-sonnet-4-5", chunks(t, "anthropic-clear-thinking.1.chunks.txt"), chunks(t, "anthropic-text.chunks.txt"))
	sid := r.Ready(t)
	r.SetOption(t, sid, "thought_level", "low")
	r.MustPrompt(t, sid, "Divide the result by 5", "end_turn")
	ups := r.Updates(sid)
	if got := testkit.TextOf(ups, "agent_thought_chunk"); got != rec[0].Thinking {
		t.Errorf("thoughts %q, recorded %q", got, rec[0].Thinking)
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != rec[1].Text {
		t.Errorf("text %q, recorded %q", got, rec[1].Text)
	}
	r.MustPrompt(t, sid, "Thanks", "end_turn")
	second := decode(t, r.Server.Requests()[1].Body)
	if len(second.Messages) != 3 || second.Messages[1].Role != "assistant" || len(second.Messages[1].Content) != len(rec) {
		t.Fatalf("second request messages: %+v", second.Messages)
	}
	for i, b := range rec {
		sameBlock(t, "assistant block "+string(rune('0'+i)), second.Messages[1].Content[i], b)
	}
}

// Defect 2: two consecutive redacted_thinking blocks (recorded with
// Anthropic's documented trigger string) go back as two blocks, in order,
// each with its data unmodified, as the real API accepted them.
func TestConsecutiveRedactedThinkingBlocksGoBackUnmodified(t *testing.T) {
	t.Parallel()
	cas := replay.Cassette(t, replay.Read(t, "test_anthropic_model_thinking_part_redacted_stream.yaml"))
	rec := blocks(t, sseEvents(cas[0].Response.Body))
	if len(rec) != 3 || rec[0].Type != "redacted_thinking" || rec[1].Type != "redacted_thinking" {
		t.Fatalf("recording: %+v", rec)
	}
	r := start(t, "claude-sonnet-4-5", cas[0].Response, chunks(t, "anthropic-text.chunks.txt"))
	sid := r.Ready(t)
	r.SetOption(t, sid, "thought_level", "low")
	r.MustPrompt(t, sid, "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB", "end_turn")
	if got := testkit.TextOf(r.Updates(sid), "agent_message_chunk"); got != rec[2].Text {
		t.Errorf("text %q, recorded %q", got, rec[2].Text)
	}
	r.MustPrompt(t, sid, "What was that?", "end_turn")
	second := decode(t, r.Server.Requests()[1].Body)
	if len(second.Messages) != 3 || second.Messages[1].Role != "assistant" {
		t.Fatalf("second request messages: %+v", second.Messages)
	}
	got := second.Messages[1].Content
	if len(got) != len(rec) {
		t.Fatalf("assistant turn went back as %d blocks, recorded %d: %v", len(got), len(rec), got)
	}
	for i, b := range rec {
		sameBlock(t, "assistant block "+string(rune('0'+i)), got[i], b)
	}
	// The real API accepted exactly this shape: {type, data} blocks first,
	// then the text (the non-streamed recording's second request).
	acc := decode(t, replay.Cassette(t, replay.Read(t, "test_anthropic_model_thinking_part_redacted.yaml"))[1].RequestBody)
	if a := acc.Messages[1].Content; len(a) != 2 || a[0]["type"] != "redacted_thinking" || len(a[0]) != 2 || a[1]["type"] != "text" {
		t.Errorf("accepted request's assistant turn: %v", a)
	}
}

// A recorded tool call, then a recorded answer: two requests. The
// follow-up carries the assistant turn as recorded (text, then tool_use
// with its id, name and input) and a tool_result for that id.
func TestToolLoopSendsTheRecordedCallAndItsResult(t *testing.T) {
	t.Parallel()
	rec := blocks(t, chunkEvents(replay.Read(t, "anthropic-tool-no-args.chunks.txt")))
	r := start(t, "claude-sonnet-4-5", chunks(t, "anthropic-tool-no-args.chunks.txt"), chunks(t, "anthropic-text.chunks.txt"))
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Update the issue list", "end_turn")
	ups := r.Updates(sid)
	if calls := testkit.OfKind(ups, "tool_call"); len(calls) != 1 {
		t.Errorf("%d tool_call updates, want 1", len(calls))
	}
	reqs := r.Server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	second := decode(t, reqs[1].Body)
	if len(second.Messages) != 3 {
		t.Fatalf("messages: %+v", second.Messages)
	}
	asst, user := second.Messages[1], second.Messages[2]
	if asst.Role != "assistant" || len(asst.Content) != len(rec) {
		t.Fatalf("assistant turn %v, recorded %+v", asst.Content, rec)
	}
	for i, b := range rec {
		sameBlock(t, "assistant block "+string(rune('0'+i)), asst.Content[i], b)
	}
	if user.Role != "user" || len(user.Content) == 0 || user.Content[0]["type"] != "tool_result" || user.Content[0]["tool_use_id"] != rec[1].ID {
		t.Errorf("tool result turn: %v", user.Content)
	}
	if len(second.Tools) == 0 {
		t.Error("the follow-up request dropped the tools")
	}
}

// Defect 7: Claude 4.6 models get adaptive thinking with an effort, the
// shape the real API accepted for claude-opus-4-6 (recorded), not the
// deprecated {type: enabled, budget_tokens}.
func TestClaude46GetsAdaptiveThinkingWithEffort(t *testing.T) {
	t.Parallel()
	acc := decode(t, replay.Cassette(t, replay.Read(t, "test_anthropic_opus_46_adaptive_thinking_accepts_tool_output_unified.yaml"))[0].RequestBody)
	if acc.Thinking["type"] != "adaptive" || acc.Output["effort"] != "high" {
		t.Fatalf("accepted request: thinking %v, output_config %v", acc.Thinking, acc.Output)
	}
	for _, model := range []string{"claude-opus-4-6", "claude-sonnet-4-6"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			r := start(t, model, chunks(t, "anthropic-text.chunks.txt"))
			sid := r.Ready(t)
			r.SetOption(t, sid, "thought_level", "high")
			r.MustPrompt(t, sid, "Hello", "end_turn")
			got := decode(t, r.Server.Requests()[0].Body)
			if len(got.Thinking) != len(acc.Thinking) || got.Thinking["type"] != acc.Thinking["type"] || got.Output["effort"] != acc.Output["effort"] {
				t.Errorf("thinking %v, output_config %v; the accepted request had %v, %v", got.Thinking, got.Output, acc.Thinking, acc.Output)
			}
		})
	}
}

// Defect 7: an id newer than the catalog, of a known family, gets the
// family's current defaults: thinking (adaptive, as the family's newest
// model) and its max_tokens, not 8192 without thinking.
func TestUnknownIDOfAKnownFamilyGetsTheFamilyDefaults(t *testing.T) {
	t.Parallel()
	r := start(t, "claude-opus-4-7", chunks(t, "anthropic-text.chunks.txt"))
	sid := r.Ready(t)
	var res struct {
		ConfigOptions []struct {
			ID string `json:"id"`
		} `json:"configOptions"`
	}
	r.MustCall(r.Ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "thought_level", "value": "medium"}, &res)
	r.MustPrompt(t, sid, "Hello", "end_turn")
	got := decode(t, r.Server.Requests()[0].Body)
	if got.Thinking["type"] != "adaptive" || got.Output["effort"] != "medium" {
		t.Errorf("thinking %v, output_config %v, want adaptive with effort medium", got.Thinking, got.Output)
	}
	if got.MaxTokens != 128000 {
		t.Errorf("max_tokens %d, want claude-opus-4-6's 128000", got.MaxTokens)
	}
	if strings.Contains(string(r.Server.Requests()[0].Body), "budget_tokens") {
		t.Error("budget_tokens sent to a model that accepts only adaptive thinking")
	}
}
