package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// sseData decodes the data of every event of a recorded event stream.
func sseData(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range bytes.Lines(body) {
		d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if !ok || bytes.Equal(bytes.TrimSpace(d), []byte("[DONE]")) {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatalf("recorded event %s: %v", d, err)
		}
		out = append(out, v)
	}
	return out
}

// TestParallelFunctionCallsEachRunAndEachGetsItsOutput replays a real
// gpt-4o-mini Responses stream with two function calls in one response
// (add and multiply, charmbracelet/fantasy's go-vcr cassette; see
// ../SOURCES-openai.md), then the recorded text answer. The cassette's
// second request is the follow-up the real API accepted: both
// function_call items, then one function_call_output per call_id. corvid
// must show each call as its own tool call (call_id, name, arguments as
// streamed), run both (corvid has neither tool, so both fail), and send
// both calls exactly as output_item.done gave them, each followed (not
// necessarily at once) by exactly one output for its call_id.
func TestParallelFunctionCallsEachRunAndEachGetsItsOutput(t *testing.T) {
	cas := replay.GoVCR(t, replay.Read(t, "fantasy-gpt-4o-mini-responses-multi_tool_streaming.yaml"))
	if len(cas) != 2 {
		t.Fatalf("cassette has %d interactions, want 2", len(cas))
	}
	var rec []map[string]any
	for _, ev := range sseData(t, cas[0].Response.Body) {
		if it, _ := ev["item"].(map[string]any); ev["type"] == "response.output_item.done" && it["type"] == "function_call" {
			rec = append(rec, it)
		}
	}
	if len(rec) != 2 || rec[0]["call_id"] == rec[1]["call_id"] {
		t.Fatalf("recorded response has %d function calls, this test needs 2 distinct ones", len(rec))
	}
	var accItems struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(cas[1].RequestBody, &accItems); err != nil {
		t.Fatal(err)
	}
	accCalls := replay.Where(accItems.Input, "type", "function_call")
	accOuts := replay.Where(accItems.Input, "type", "function_call_output")
	if len(accCalls) != 2 || len(accOuts) != 2 {
		t.Fatalf("accepted follow-up has %d calls and %d outputs, want 2 and 2", len(accCalls), len(accOuts))
	}
	var answer string
	for _, ev := range sseData(t, cas[1].Response.Body) {
		if ev["type"] == "response.output_text.done" {
			answer, _ = ev["text"].(string)
		}
	}

	srv := replay.New(t, replay.Responses(cas)...)
	c := replay.Open(t, withModel(openaiProvider, "openai:gpt-4o-mini"), srv, nil)
	c.MustPrompt(t, c.SID, "Add and multiply the number 2 and 3", "end_turn")
	ups := c.Updates(c.SID)

	calls := testkit.OfKind(ups, "tool_call")
	if len(calls) != len(rec) {
		t.Fatalf("%d tool_call updates, want %d (one per recorded function call)", len(calls), len(rec))
	}
	for i, r := range rec {
		if calls[i].ToolCallID != r["call_id"] {
			t.Errorf("tool_call %d id %q, recorded call_id %v", i, calls[i].ToolCallID, r["call_id"])
		}
		if calls[i].Title != r["name"] {
			t.Errorf("tool_call %d title %q, recorded name %v", i, calls[i].Title, r["name"])
		}
		var got, want any
		if json.Unmarshal(calls[i].RawInput, &got) != nil || json.Unmarshal([]byte(r["arguments"].(string)), &want) != nil || js(got) != js(want) {
			t.Errorf("tool_call %d rawInput %s, recorded arguments %v", i, calls[i].RawInput, r["arguments"])
		}
		if !finished(ups, calls[i].ToolCallID) {
			t.Errorf("tool call %v (%v) never finished: corvid did not run it", r["call_id"], r["name"])
		}
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != answer {
		t.Errorf("message text %q, want the recorded %q", got, answer)
	}

	reqs := srv.MustRequests(t, 2)
	items := reqs[1].Items(t, "input")
	got := replay.Where(items, "type", "function_call")
	if len(got) != len(rec) {
		t.Fatalf("follow-up has %d function_call items, want %d: %s", len(got), len(rec), reqs[1].Body)
	}
	for k, r := range rec {
		for _, f := range []string{"call_id", "name", "arguments"} {
			if got[k][f] != r[f] {
				t.Errorf("follow-up function_call %d %s = %v, recorded %v", k, f, got[k][f], r[f])
			}
		}
		if got[k]["call_id"] != accCalls[k]["call_id"] {
			t.Errorf("follow-up function_call %d is %v, the accepted request has %v there", k, got[k]["call_id"], accCalls[k]["call_id"])
		}
	}
	// One output per call_id, after its call.
	seen := map[any]int{}
	for i, it := range items {
		switch it["type"] {
		case "function_call":
			seen[it["call_id"]] = 0
		case "function_call_output":
			n, ok := seen[it["call_id"]]
			if !ok {
				t.Errorf("input item %d: output for %v before (or without) its function_call", i, it["call_id"])
			}
			seen[it["call_id"]] = n + 1
		}
	}
	for _, a := range accOuts {
		if seen[a["call_id"]] != 1 {
			t.Errorf("follow-up has %d function_call_output items for %v, want 1", seen[a["call_id"]], a["call_id"])
		}
	}
	if outs := replay.Where(items, "type", "function_call_output"); len(outs) != len(accOuts) {
		t.Errorf("follow-up has %d function_call_output items, the accepted one %d", len(outs), len(accOuts))
	}
	validateInput(t, 2, items)
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
