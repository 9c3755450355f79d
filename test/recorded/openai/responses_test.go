// Package openai replays real OpenAI Responses API recordings (kept
// byte-identical in testdata/, sources in test/recorded/SOURCES-openai.md)
// to the built corvid over ACP, and checks both what the editor sees and
// the follow-up requests corvid sends: against the items the real API
// returned, and against the required fields and enums of OpenAI's published
// OpenAPI schemas (written out, with their schema names, in
// test/recorded/openaischema/schema.go).
//
//	go test ./test/recorded/openai/
package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestFixturesAreByteIdenticalToTheirSources(t *testing.T) { replay.CheckSums(t) }

var openaiProvider = replay.Provider{KeyVar: "OPENAI_API_KEY", BaseVar: "OPENAI_BASE_URL", Suffix: "/v1"}

func withModel(p replay.Provider, model string) replay.Provider {
	p.Model = model
	return p
}

const responseCreated = `"type":"response.created"`

// completedOutput returns the output items of the response.completed event
// of one recorded response: what the real API said it produced.
func completedOutput(t *testing.T, chunks []byte) (output []map[string]any, usage map[string]any) {
	t.Helper()
	for _, ev := range replay.Events(t, chunks) {
		if ev["type"] == "response.completed" {
			r := ev["response"].(map[string]any)
			for _, o := range r["output"].([]any) {
				output = append(output, o.(map[string]any))
			}
			usage, _ = r["usage"].(map[string]any)
			return output, usage
		}
	}
	t.Fatal("recording has no response.completed")
	return nil, nil
}

// doneItems returns the items of the response.output_item.done events, in
// order: each as the stream delivered it to corvid.
func doneItems(t *testing.T, chunks []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range replay.Events(t, chunks) {
		if ev["type"] == "response.output_item.done" {
			out = append(out, ev["item"].(map[string]any))
		}
	}
	return out
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestReasoningToolLoopReplaysAndEachFollowUpCarriesTheRecordedItems
// replays a real gpt-5.1-codex-max tool loop of four responses (reasoning
// with encrypted content and a summary, then a function call per step,
// then text). corvid has no "calculator" tool, so each call gets an error
// result; the loop goes on as the recording did. Every follow-up must
// carry the reasoning item and function call exactly as the API returned
// them (id, summary, encrypted_content; call_id, name, arguments) and a
// function_call_output for the call.
func TestReasoningToolLoopReplaysAndEachFollowUpCarriesTheRecordedItems(t *testing.T) {
	rec := replay.Read(t, "openai-reasoning-encrypted-content.1.chunks.txt")
	segs := replay.Split(rec, responseCreated)
	if len(segs) != 4 {
		t.Fatalf("recording has %d responses, want 4", len(segs))
	}
	var res []replay.Response
	for _, s := range segs {
		res = append(res, replay.Chunks(s, false))
	}
	srv := replay.New(t, res...)
	c := replay.Open(t, withModel(openaiProvider, "openai:gpt-5.1-codex-max"), srv, nil)
	c.SetThought(t, "high")
	c.MustPrompt(t, c.SID, "What is (12 + 7) * 3 * 10? Use the calculator.", "end_turn")
	ups := c.Updates(c.SID)

	out0, _ := completedOutput(t, segs[0])
	summary := out0[0]["summary"].([]any)[0].(map[string]any)["text"].(string)
	if got := testkit.TextOf(ups, "agent_thought_chunk"); got != summary {
		t.Errorf("thought chunks %q, want the recorded summary %q", got, summary)
	}
	last, lastUsage := completedOutput(t, segs[3])
	if used, _ := c.Used(t); used != int64(lastUsage["total_tokens"].(float64)) {
		t.Errorf("usage_update used %d, want the last recorded response's total_tokens %v", used, lastUsage["total_tokens"])
	}
	want := last[0]["content"].([]any)[0].(map[string]any)["text"].(string)
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != want {
		t.Errorf("message text %q, want the recorded %q", got, want)
	}
	if n := len(testkit.OfKind(ups, "tool_call")); n != 3 {
		t.Errorf("%d tool_call updates, want 3 (one per recorded function call)", n)
	}

	reqs := srv.MustRequests(t, 4)
	first := reqs[0].JSON(t)
	if first["stream"] != true || first["store"] != false {
		t.Errorf("first request stream=%v store=%v, want a stateless stream (true, false)", first["stream"], first["store"])
	}
	if inc := js(first["include"]); !strings.Contains(inc, "reasoning.encrypted_content") {
		t.Errorf("first request include %s: without reasoning.encrypted_content a stateless loop loses its reasoning", inc)
	}
	if r, _ := first["reasoning"].(map[string]any); r["effort"] != "high" {
		t.Errorf("first request reasoning %s, want effort high for thought level high", js(first["reasoning"]))
	}
	// What the stream said in output_item.done is what must come back; the
	// completed event's copy must agree (it is the API's own record).
	done0 := doneItems(t, segs[0])
	for i := 1; i < 4; i++ {
		items := reqs[i].Items(t, "input")
		rs := replay.Where(items, "type", "reasoning")
		if len(rs) != 1 {
			t.Fatalf("request %d has %d reasoning items, want 1: %s", i+1, len(rs), reqs[i].Body)
		}
		checkReasoningEcho(t, i+1, rs[0], done0[0])
		calls := replay.Where(items, "type", "function_call")
		outs := replay.Where(items, "type", "function_call_output")
		if len(calls) != i || len(outs) != i {
			t.Fatalf("request %d has %d function_call and %d function_call_output items, want %d each", i+1, len(calls), len(outs), i)
		}
		for k := 0; k < i; k++ {
			var rec map[string]any
			if k == 0 {
				rec = done0[1]
			} else {
				rec = doneItems(t, segs[k])[0]
			}
			for _, f := range []string{"call_id", "name", "arguments"} {
				if calls[k][f] != rec[f] {
					t.Errorf("request %d function_call %d %s = %v, recorded %v", i+1, k+1, f, calls[k][f], rec[f])
				}
			}
			if outs[k]["call_id"] != rec["call_id"] {
				t.Errorf("request %d function_call_output %d call_id %v, want %v", i+1, k+1, outs[k]["call_id"], rec["call_id"])
			}
		}
		validateInput(t, i+1, items)
	}
}

// checkReasoningEcho compares a reasoning input item with the recorded one.
func checkReasoningEcho(t *testing.T, reqNo int, got, rec map[string]any) {
	t.Helper()
	if got["id"] != rec["id"] {
		t.Errorf("request %d reasoning id %v, recorded %v", reqNo, got["id"], rec["id"])
	}
	if got["encrypted_content"] != rec["encrypted_content"] {
		t.Errorf("request %d reasoning encrypted_content differs from the recorded one (%d vs %d bytes)", reqNo, len(js(got["encrypted_content"])), len(js(rec["encrypted_content"])))
	}
	gs, ok := got["summary"]
	if !ok {
		t.Errorf("request %d reasoning item has no summary; the API requires it (recorded: %s)", reqNo, js(rec["summary"]))
		return
	}
	if js(gs) != js(rec["summary"]) {
		t.Errorf("request %d reasoning summary %s, recorded %s", reqNo, js(gs), js(rec["summary"]))
	}
}

// TestReasoningWithEmptySummaryGoesBackWithSummaryAndEncryptedContent
// replays a real gpt-5.6 response whose reasoning item has no summary
// (summary: [], as gpt-5 models often send) but encrypted content, then a
// function call. The follow-up must carry that reasoning item with
// "summary": [] (ReasoningItem.required is [id, summary, type]; the API
// refuses the item without it) and the encrypted_content of
// response.output_item.done, byte for byte.
func TestReasoningWithEmptySummaryGoesBackWithSummaryAndEncryptedContent(t *testing.T) {
	first := replay.Read(t, "programmatic-tool-calling.1.chunks.txt")
	// The answer to the follow-up: the text response that closes the other
	// recorded loop (the follow-up request is what this test is about).
	text := replay.Split(replay.Read(t, "openai-reasoning-encrypted-content.1.chunks.txt"), responseCreated)[3]
	srv := replay.New(t, replay.Chunks(first, false), replay.Chunks(text, false))
	c := replay.Open(t, withModel(openaiProvider, "openai:gpt-5.6-sol"), srv, nil)
	c.MustPrompt(t, c.SID, "How many of each item are in the inventory?", "end_turn")
	reqs := srv.MustRequests(t, 2)
	var recReasoning, recCall map[string]any
	for _, it := range doneItems(t, first) {
		switch it["type"] {
		case "reasoning":
			recReasoning = it
		case "function_call":
			recCall = it
		}
	}
	if s := js(recReasoning["summary"]); s != "[]" {
		t.Fatalf("the recording's reasoning summary is %s; this test needs an empty one", s)
	}
	items := reqs[1].Items(t, "input")
	rs := replay.Where(items, "type", "reasoning")
	if len(rs) != 1 {
		t.Fatalf("follow-up has %d reasoning items, want 1 (the recorded %v): %s", len(rs), recReasoning["id"], reqs[1].Body)
	}
	checkReasoningEcho(t, 2, rs[0], recReasoning)
	calls := replay.Where(items, "type", "function_call")
	if len(calls) != 1 || calls[0]["call_id"] != recCall["call_id"] || calls[0]["name"] != recCall["name"] || calls[0]["arguments"] != recCall["arguments"] {
		t.Errorf("follow-up function calls %s, want the recorded %s", js(calls), js(recCall))
	}
	// The reasoning item must come before the call it led to, as the API
	// returned them.
	for i, it := range items {
		if it["type"] == "function_call" {
			if i == 0 || items[i-1]["type"] != "reasoning" {
				t.Errorf("follow-up item before the function call is %v, want the reasoning item", items[max(i-1, 0)]["type"])
			}
			break
		}
	}
	validateInput(t, 2, items)
}

func textOf(c *replay.Run) string {
	return testkit.TextOf(c.Updates(c.SID), "agent_message_chunk")
}
