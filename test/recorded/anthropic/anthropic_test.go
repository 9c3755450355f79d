package anthropic

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

func TestTextStreamsAndUsageIsReported(t *testing.T) {
	t.Parallel()
	raw := replay.Read(t, "anthropic-text.chunks.txt")
	want := blocks(t, replay.Lines(raw))
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
	rec := blocks(t, replay.Lines(replay.Read(t, "anthropic-clear-thinking.1.chunks.txt")))
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

// Defect 2: consecutive redacted_thinking blocks (recorded with Anthropic's
// documented trigger string: two in one recording, nineteen in the other)
// go back in the next request as separate blocks, in recorded order, each
// exactly {type, data} with its data unmodified (the documented shape; the
// newer recordings hold no follow-up request, see SOURCES.md).
func TestConsecutiveRedactedThinkingBlocksGoBackUnmodified(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cassette string
		redacted int
	}{
		{"test_anthropic_model_thinking_part_redacted_stream.yaml", 2},
		{"test_anthropic_model_thinking_part_redacted.yaml", 19},
	} {
		t.Run(tc.cassette, func(t *testing.T) {
			t.Parallel()
			cas := replay.Cassette(t, replay.Read(t, tc.cassette))
			rec := blocks(t, sseEvents(cas[0].Response.Body))
			if len(rec) != tc.redacted+1 || rec[tc.redacted].Type != "text" || rec[tc.redacted].Text == "" {
				t.Fatalf("recording: %+v", rec)
			}
			seen := map[string]bool{}
			for _, b := range rec[:tc.redacted] {
				if b.Type != "redacted_thinking" || b.Data == "" || seen[b.Data] {
					t.Fatalf("recording: block %+v is not a new redacted_thinking block", b)
				}
				seen[b.Data] = true
			}
			r := start(t, "claude-sonnet-4-5", cas[0].Response, chunks(t, "anthropic-text.chunks.txt"))
			sid := r.Ready(t)
			r.SetOption(t, sid, "thought_level", "low")
			r.MustPrompt(t, sid, "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB", "end_turn")
			if got := testkit.TextOf(r.Updates(sid), "agent_message_chunk"); got != rec[tc.redacted].Text {
				t.Errorf("text %q, recorded %q", got, rec[tc.redacted].Text)
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
				sameBlock(t, fmt.Sprintf("assistant block %d", i), got[i], b)
			}
		})
	}
}

// A recorded tool call, then a recorded answer: two requests. The
// follow-up carries the assistant turn as recorded (text, then tool_use
// with its id, name and input) and a tool_result for that id.
func TestToolLoopSendsTheRecordedCallAndItsResult(t *testing.T) {
	t.Parallel()
	rec := blocks(t, replay.Lines(replay.Read(t, "anthropic-tool-no-args.chunks.txt")))
	r := start(t, "claude-sonnet-4-5", chunks(t, "anthropic-tool-no-args.chunks.txt"), chunks(t, "anthropic-text.chunks.txt"))
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Update the issue list", "end_turn")
	ups := r.Updates(sid)
	if calls := testkit.OfKind(ups, "tool_call"); len(calls) != 1 {
		t.Errorf("%d tool_call updates, want 1", len(calls))
	}
	reqs := r.Server.MustRequests(t, 2)
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

// Prompt caching: the system prompt, the tools and the conversation so far
// are marked as cache breakpoints (cache_control ephemeral, at most four
// per request as documented), and the cache reads and writes a recorded
// response reports reach the editor: in used, in the cost (priced at the
// cache rates) and in the usage_update's _meta.
func TestPromptCachingMarksThePrefixAndReportsCacheUsage(t *testing.T) {
	t.Parallel()
	// Recorded usage (message_delta): input 6, cache write 3337, cache
	// read 6289, output 198. The recording's server tool blocks are not
	// corvid's and are ignored.
	r := start(t, "claude-sonnet-4-6", chunks(t, "anthropic-code-execution-20260120-prompt-cache.1.chunks.txt"))
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Sum the squares of 1 to 12", "end_turn")
	ups := r.Updates(sid)
	used, _, cost := replay.UsedOfLastUsage(t, ups)
	if used != 6+3337+6289+198 {
		t.Errorf("used %d, want input + cache write + cache read + output = %d", used, 6+3337+6289+198)
	}
	// Sonnet 4.6: $3 input, $15 output, $0.30 cache read, $3.75 cache write per MTok.
	want := (6*3 + 198*15 + 6289*0.30 + 3337*3.75) / 1e6
	if cost == nil || math.Abs(*cost-want) > 1e-9 {
		t.Errorf("cost %v, want %.8f", cost, want)
	}
	us := testkit.OfKind(ups, "usage_update")
	var meta struct {
		Meta struct {
			Corvid struct {
				InputTokens      int64 `json:"inputTokens"`
				OutputTokens     int64 `json:"outputTokens"`
				CacheReadTokens  int64 `json:"cacheReadTokens"`
				CacheWriteTokens int64 `json:"cacheWriteTokens"`
			} `json:"corvid"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(us[len(us)-1].Raw, &meta); err != nil {
		t.Fatal(err)
	}
	if c := meta.Meta.Corvid; c.InputTokens != 6 || c.OutputTokens != 198 || c.CacheReadTokens != 6289 || c.CacheWriteTokens != 3337 {
		t.Errorf("usage_update _meta.corvid %+v, want the recorded 6/198/6289/3337", c)
	}

	var body struct {
		System   []map[string]any `json:"system"`
		Tools    []map[string]any `json:"tools"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	raw := r.Server.Requests()[0].Body
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	ephemeral := func(m map[string]any) bool {
		cc, _ := m["cache_control"].(map[string]any)
		return cc["type"] == "ephemeral"
	}
	if len(body.System) == 0 || !ephemeral(body.System[len(body.System)-1]) {
		t.Errorf("system prompt not cached: %v", body.System)
	}
	if len(body.Tools) == 0 || !ephemeral(body.Tools[len(body.Tools)-1]) {
		t.Error("tools not cached: no cache_control on the last tool")
	}
	last := body.Messages[len(body.Messages)-1].Content
	if !ephemeral(last[len(last)-1]) {
		t.Errorf("conversation not cached: last block %v", last[len(last)-1])
	}
	if n := strings.Count(string(raw), `"cache_control"`); n > 4 {
		t.Errorf("%d cache breakpoints; the API allows 4", n)
	}
}

// The 1M context tier changes the request, not only corvid's accounting:
// Anthropic's long-context beta header goes with it. The choice survives
// session/load and session/resume in the same process.
func TestLongContextTierSendsTheBetaHeaderAndSurvivesLoadAndResume(t *testing.T) {
	t.Parallel()
	text := chunks(t, "anthropic-text.chunks.txt")
	r := start(t, "claude-sonnet-4-6", text, text, text, text)
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Hello", "end_turn")
	r.SetOption(t, sid, "context_window", "1000000")
	r.MustPrompt(t, sid, "Hello again", "end_turn")
	r.MustCall(r.Ctx, "session/load", map[string]any{"sessionId": sid, "cwd": r.Workspace, "mcpServers": []any{}}, nil)
	r.MustPrompt(t, sid, "After load", "end_turn")
	r.MustCall(r.Ctx, "session/resume", map[string]any{"sessionId": sid, "cwd": r.Workspace}, nil)
	r.MustPrompt(t, sid, "After resume", "end_turn")
	reqs := r.Server.MustRequests(t, 4)
	for i, want := range []bool{false, true, true, true} {
		got := strings.Contains(reqs[i].Header.Get("Anthropic-Beta"), "context-1m-2025-08-07")
		if got != want {
			t.Errorf("request %d: long-context beta %v, want %v (anthropic-beta %q)", i+1, got, want, reqs[i].Header.Get("Anthropic-Beta"))
		}
	}
	if _, size, _ := replay.UsedOfLastUsage(t, r.Updates(sid)); size != 1000000 {
		t.Errorf("usage size after load and resume %d, want the chosen 1000000", size)
	}
}
