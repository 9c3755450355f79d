package chat

import (
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// TestThoughtLevelReachesChatCompletionsPresets sets each thought level in
// turn and checks the request says it in the provider's documented way:
// reasoning_effort for gpt-oss (Groq; values per OpenAI's ReasoningEffort),
// a reasoning object with an effort for OpenRouter (its documented unified
// control, which it maps to each upstream model, Claude's thinking budget
// included), and nothing at level off. The answers are a real Groq stream
// that carries its reasoning in delta.reasoning (as OpenRouter's does); its
// thoughts must reach the editor.
func TestThoughtLevelReachesChatCompletionsPresets(t *testing.T) {
	cases := []struct {
		p     replay.Provider
		check func(t *testing.T, body map[string]any, level string)
	}{
		{preset("groq", "openai/gpt-oss-120b"), func(t *testing.T, body map[string]any, level string) {
			want := map[string]any{"high": "high", "low": "low", "off": nil}[level]
			if got := body["reasoning_effort"]; got != want {
				t.Errorf("thought level %s: reasoning_effort %v, want %v", level, got, want)
			}
			if _, ok := body["reasoning"]; ok {
				t.Errorf("thought level %s: Groq got a reasoning object, which it does not take", level)
			}
		}},
		{preset("openrouter", "anthropic/claude-sonnet-4.6"), func(t *testing.T, body map[string]any, level string) {
			r, _ := body["reasoning"].(map[string]any)
			switch level {
			case "off":
				if body["reasoning"] != nil {
					t.Errorf("thought level off: reasoning %s, want none", js(body["reasoning"]))
				}
			default:
				if r["effort"] != level {
					t.Errorf("thought level %s: reasoning %s, want {\"effort\":%q}", level, js(body["reasoning"]), level)
				}
			}
			if _, ok := body["reasoning_effort"]; ok {
				t.Errorf("thought level %s: OpenRouter got reasoning_effort; its control is the reasoning object", level)
			}
		}},
	}
	levels := []string{"high", "low", "off"}
	for _, tc := range cases {
		t.Run(tc.p.Model, func(t *testing.T) {
			t.Parallel()
			answer := replay.Read(t, "groq-reasoning.chunks.txt")
			var res []replay.Response
			for range levels {
				res = append(res, replay.ChatChunks(answer))
			}
			srv := replay.New(t, res...)
			c := replay.Open(t, tc.p, srv, nil)
			for _, level := range levels {
				c.SetThought(t, level)
				if stop, rerr := c.Prompt(c.Ctx, c.SID, "Think, then answer."); rerr != nil || stop != "end_turn" {
					t.Fatalf("prompt at thought level %s: stop %q, error %v", level, stop, rerr)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != len(levels) {
				t.Fatalf("corvid sent %d requests, want %d", len(reqs), len(levels))
			}
			if got, want := testkit.TextOf(c.Updates(c.SID), "agent_thought_chunk"), readRecording(t, answer).reasoning; got != want+want+want {
				t.Errorf("thought chunks carry %d chars, want the recorded reasoning three times (%d chars)", len(got), 3*len(want))
			}
			for i, level := range levels {
				tc.check(t, reqs[i].JSON(t), level)
				validateMessages(t, reqs[i])
			}
		})
	}
}
