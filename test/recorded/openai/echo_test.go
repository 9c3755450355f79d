package openai

import (
	"testing"

	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// itemKinds names each input item by its type; a message without one (an
// EasyInputMessage) by "message/ROLE".
func itemKinds(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		k, _ := it["type"].(string)
		if k == "" || k == "message" {
			r, _ := it["role"].(string)
			k = "message/" + r
		}
		out = append(out, k)
	}
	return out
}

// A real gpt-5.5 tool loop (pydantic-ai's cassette, see
// ../SOURCES-openai.md), streamed with include
// ["reasoning.encrypted_content"]: a reasoning item (summary [], encrypted
// content), a commentary message, then a get_capital call. The cassette's
// second request is the follow-up the real API accepted: the reasoning
// item as returned (id, summary, encrypted_content, type), then the
// message, the function_call and its output. corvid's follow-up must hold
// the same items in the same order, the reasoning item equal to the
// accepted one field for field (OpenAI: with store false, reasoning items
// go back with their encrypted content, before the calls they led to).
// On the next prompt the reasoning item is still there, intact (OpenAI:
// earlier turns' reasoning items may be sent; the API drops those it does
// not need).
func TestReasoningItemGoesBackBeforeItsCallAsAccepted(t *testing.T) {
	cas := replay.Cassette(t, replay.Read(t, "test_openai_responses_phase_streamed_on_part_start.yaml"))
	if len(cas) != 2 {
		t.Fatalf("cassette has %d interactions, want 2", len(cas))
	}
	var acc replay.Request
	acc.Body = cas[1].RequestBody
	accItems := acc.Items(t, "input")
	accRS := replay.Where(accItems, "type", "reasoning")
	if len(accRS) != 1 || accRS[0]["encrypted_content"] == nil {
		t.Fatalf("the accepted follow-up has no reasoning item with encrypted content: %s", acc.Body)
	}

	srv := replay.New(t, cas[0].Response, cas[1].Response, cas[1].Response)
	c := replay.Open(t, withModel(openaiProvider, "openai:gpt-5"), srv, nil)
	c.SetThought(t, "medium")
	c.MustPrompt(t, c.SID, "What is the capital of PotatoLand?", "end_turn")

	reqs := srv.MustRequests(t, 2)
	if first := reqs[0].JSON(t); first["store"] != false || js(first["include"]) != `["reasoning.encrypted_content"]` {
		t.Errorf("first request store %v include %s, want a stateless request asking for the encrypted reasoning", first["store"], js(first["include"]))
	}
	items := reqs[1].Items(t, "input")
	if got, want := js(itemKinds(items)), js(itemKinds(accItems)); got != want {
		t.Fatalf("follow-up items %s, the accepted follow-up's %s:\n%s", got, want, reqs[1].Body)
	}
	rs := replay.Where(items, "type", "reasoning")
	for _, f := range []string{"type", "id", "summary", "encrypted_content"} {
		if js(rs[0][f]) != js(accRS[0][f]) {
			t.Errorf("follow-up reasoning item %s = %.80s, the accepted one's %.80s", f, js(rs[0][f]), js(accRS[0][f]))
		}
	}
	for _, call := range replay.Where(items, "type", "function_call") {
		accCall := replay.Where(accItems, "type", "function_call")[0]
		for _, f := range []string{"call_id", "name", "arguments"} {
			if call[f] != accCall[f] {
				t.Errorf("follow-up function_call %s = %v, the accepted one's %v", f, call[f], accCall[f])
			}
		}
	}
	validateInput(t, 2, items)

	c.MustPrompt(t, c.SID, "And its population?", "end_turn")
	third := srv.MustRequests(t, 3)[2].Items(t, "input")
	rs = replay.Where(third, "type", "reasoning")
	if len(rs) != 1 || js(rs[0]["encrypted_content"]) != js(accRS[0]["encrypted_content"]) || js(rs[0]["id"]) != js(accRS[0]["id"]) {
		t.Errorf("next turn: reasoning items %.200s, want the first turn's, intact", js(rs))
	}
}
