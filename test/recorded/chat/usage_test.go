package chat

import (
	"math"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm/catalog"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// TestXAIReasoningTokensCountInUsedAndCost replays a real xAI tool loop
// (grok reasoning_content, a tool call, then text). xAI's usage leaves the
// reasoning tokens out of completion_tokens (completion 1, reasoning 290,
// total 303 = prompt 12 + 1 + 290); they are billed as output, so `used`
// must be the recorded total_tokens and the cost must price them.
func TestXAIReasoningTokensCountInUsedAndCost(t *testing.T) {
	first := replay.Read(t, "xai-tool-call.chunks.txt")
	second := replay.Read(t, "xai-text.chunks.txt")
	srv := replay.New(t, replay.ChatChunks(first), replay.ChatChunks(second))
	c := replay.Open(t, preset("xai", "grok-code-fast-1"), srv, nil)
	c.MustPrompt(t, c.SID, "What is the weather in San Francisco?", "end_turn")
	reqs := srv.MustRequests(t, 2)
	rec1, rec2 := readRecording(t, first), readRecording(t, second)
	a := checkToolFollowUp(t, reqs[1], rec1)
	if _, ok := a["reasoning_content"]; ok {
		t.Errorf("xAI got reasoning_content back, which its API does not take: %s", js(a))
	}
	validateMessages(t, reqs[1])

	used, cost := c.Used(t)
	if want := int64(num(rec2.usage, "total_tokens")); used != want {
		t.Errorf("usage_update used %d, want the recorded total_tokens %d (reasoning tokens included)", used, want)
	}
	price := catalog.Lookup("xai", "grok-code-fast-1").Price
	var want float64
	for _, u := range []map[string]any{rec1.usage, rec2.usage} {
		cached := num(u, "prompt_tokens_details", "cached_tokens")
		out := num(u, "completion_tokens") + num(u, "completion_tokens_details", "reasoning_tokens")
		want += ((num(u, "prompt_tokens")-cached)*price.Input + cached*price.CacheRead + out*price.Output) / 1e6
	}
	if math.Abs(cost-want) > 1e-9 {
		t.Errorf("cost %.8f USD, want %.8f (reasoning tokens priced as output)", cost, want)
	}
}

// num reads a number at a path of nested objects (0 when absent).
func num(v map[string]any, path ...string) float64 {
	for i, k := range path {
		if i == len(path)-1 {
			f, _ := v[k].(float64)
			return f
		}
		v, _ = v[k].(map[string]any)
	}
	return 0
}
