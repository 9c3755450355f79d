package chat

import (
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// completionStream frames a recorded non-streamed chat.completion as the
// Chat Completions chunks the same service streams (one JSON object per
// line, for replay.ChatChunks): the role with the reasoning_content, the
// content, each tool call whole at its recorded index (its position when
// the recording has none), then the
// finish_reason with the usage. Every value is the recorded one; only the
// framing is ours, so what this proves rests on the follow-up request, not
// on this stream.
func completionStream(t *testing.T, body []byte) []byte {
	t.Helper()
	var c struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			FinishReason string         `json:"finish_reason"`
			Message      map[string]any `json:"message"`
		} `json:"choices"`
		Usage map[string]any `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("recorded completion %s: %v", body, err)
	}
	msg := c.Choices[0].Message
	var out []byte
	chunk := func(delta map[string]any, finish any, usage map[string]any) {
		ch := map[string]any{"id": c.ID, "object": "chat.completion.chunk", "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			ch["usage"] = usage
		}
		b, _ := json.Marshal(ch)
		out = append(append(out, b...), '\n')
	}
	chunk(map[string]any{"role": "assistant", "content": "", "reasoning_content": msg["reasoning_content"]}, nil, nil)
	if s, _ := msg["content"].(string); s != "" {
		chunk(map[string]any{"content": s}, nil, nil)
	}
	if tcs, ok := msg["tool_calls"].([]any); ok {
		for i, x := range tcs {
			// A streamed call carries its index (OpenAI's
			// ChatCompletionMessageToolCallChunk requires it); a
			// non-streamed message may leave it out (xAI): then the
			// index is the call's position.
			tc := x.(map[string]any)
			if _, ok := tc["index"]; !ok {
				tc["index"] = i
			}
			chunk(map[string]any{"tool_calls": []any{tc}}, nil, nil)
		}
	}
	chunk(map[string]any{}, c.Choices[0].FinishReason, c.Usage)
	return out
}

// TestDeepSeekReasonerParallelToolCallsMatchTheAcceptedFollowUp replays a
// real api.deepseek.com conversation (pydantic-ai's cassette, see
// ../SOURCES-openai.md; deepseek-reasoner answered as deepseek-v4-flash in
// thinking mode): a response that reasons and then calls two tools at
// once (get_player_name, roll_dice), then the final answer. The cassette's
// third request is the follow-up DeepSeek accepted: the assistant message
// with its content, its reasoning_content and both tool_calls, then a tool
// message per call, in order. corvid's follow-up must carry that assistant
// message field for field (DeepSeek refuses a thinking-mode tool loop whose
// assistant tool-call message lacks reasoning_content) and a tool message
// per call id, in the same order.
func TestDeepSeekReasonerParallelToolCallsMatchTheAcceptedFollowUp(t *testing.T) {
	cas := replay.Cassette(t, replay.Read(t, "test_deepseek_deferred_capability_with_thinking.yaml"))
	if len(cas) != 3 {
		t.Fatalf("cassette has %d interactions, want 3", len(cas))
	}
	calls, final := cas[1].Response.Body, cas[2].Response.Body
	var acc replay.Request
	acc.Body = cas[2].RequestBody
	accMsgs := acc.Items(t, "messages")
	// The accepted assistant message that carries the two parallel calls,
	// and the tool messages after it.
	var accAsst map[string]any
	var accTools []map[string]any
	for i, m := range accMsgs {
		if tcs, _ := m["tool_calls"].([]any); m["role"] == "assistant" && len(tcs) == 2 {
			accAsst = m
			accTools = accMsgs[i+1:]
		}
	}
	if accAsst == nil || len(accTools) != 2 {
		t.Fatalf("accepted follow-up has no assistant message with two tool_calls followed by two tool messages: %s", acc.Body)
	}
	if _, ok := accAsst["reasoning_content"].(string); !ok {
		t.Fatalf("accepted assistant message has no reasoning_content: %s", js(accAsst))
	}

	first, second := completionStream(t, calls), completionStream(t, final)
	rec1, rec2 := readRecording(t, first), readRecording(t, second)
	srv := replay.New(t, replay.ChatChunks(first), replay.ChatChunks(second))
	c := replay.Open(t, preset("deepseek", "deepseek-reasoner"), srv, nil)
	c.MustPrompt(t, c.SID, "My guess is 4", "end_turn")
	ups := c.Updates(c.SID)

	if got := testkit.TextOf(ups, "agent_thought_chunk"); got != rec1.reasoning+rec2.reasoning {
		t.Errorf("thought chunks %q, want the recorded reasoning %q", got, rec1.reasoning+rec2.reasoning)
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != rec1.text+rec2.text {
		t.Errorf("message %q, want the recorded %q", got, rec1.text+rec2.text)
	}
	tcUps := testkit.OfKind(ups, "tool_call")
	if len(tcUps) != 2 {
		t.Fatalf("%d tool_call updates, want 2", len(tcUps))
	}
	for i, want := range rec1.calls {
		if tcUps[i].ToolCallID != want.id || tcUps[i].Title != want.name {
			t.Errorf("tool_call %d is %s %q, recorded %s %q", i, tcUps[i].ToolCallID, tcUps[i].Title, want.id, want.name)
		}
		if !finished(ups, want.id) {
			t.Errorf("tool call %s never finished", want.id)
		}
	}

	reqs := srv.MustRequests(t, 2)
	a := checkToolFollowUp(t, reqs[1], rec1)
	for _, k := range []string{"role", "content", "reasoning_content"} {
		if a[k] != accAsst[k] {
			t.Errorf("follow-up assistant %s is %s, accepted %s", k, js(a[k]), js(accAsst[k]))
		}
	}
	for k := range a {
		if _, ok := accAsst[k]; !ok {
			t.Errorf("follow-up assistant message has %q, which the accepted one has not: %s", k, js(a))
		}
	}
	got, _ := a["tool_calls"].([]any)
	for k, x := range accAsst["tool_calls"].([]any) {
		w := x.(map[string]any)
		if k >= len(got) {
			t.Fatalf("follow-up has %d tool_calls, accepted %d", len(got), k+1)
		}
		g := got[k].(map[string]any)
		gf, wf := g["function"].(map[string]any), w["function"].(map[string]any)
		var ga, wa any
		if g["id"] != w["id"] || g["type"] != w["type"] || gf["name"] != wf["name"] ||
			json.Unmarshal([]byte(gf["arguments"].(string)), &ga) != nil || json.Unmarshal([]byte(wf["arguments"].(string)), &wa) != nil || js(ga) != js(wa) {
			t.Errorf("follow-up tool_call %d is %s, accepted %s", k, js(g), js(w))
		}
	}
	ms := reqs[1].Items(t, "messages")
	for i, m := range ms {
		if m["role"] != "assistant" {
			continue
		}
		for k, w := range accTools {
			if i+1+k >= len(ms) || ms[i+1+k]["role"] != "tool" || ms[i+1+k]["tool_call_id"] != w["tool_call_id"] {
				t.Errorf("message %d after the assistant one is not the tool message for %v: %s", i+1+k, w["tool_call_id"], reqs[1].Body)
			}
		}
	}
	validateMessages(t, reqs[1])
}
