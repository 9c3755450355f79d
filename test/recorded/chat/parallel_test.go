package chat

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// sseChunks returns the data of a recorded event stream as a chunk file
// (one JSON event per line, without the final [DONE]), for readRecording.
func sseChunks(body []byte) []byte {
	var out []byte
	for line := range bytes.Lines(body) {
		d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if d = bytes.TrimSpace(d); !ok || bytes.Equal(d, []byte("[DONE]")) {
			continue
		}
		out = append(append(out, d...), '\n')
	}
	return out
}

// parallelCassettes are charmbracelet/fantasy go-vcr cassettes (see
// ../SOURCES-openai.md) of real Chat Completions services, each a stream
// with two tool calls (add, multiply) at index 0 and 1, then the follow-up
// request the real service accepted and its streamed text answer. Each is
// replayed through the preset of the service that produced it.
var parallelCassettes = []struct {
	name, file string
	p          replay.Provider
	// whole: the cassette recorded non-streamed chat.completion bodies,
	// replayed framed as chunks by completionStream.
	whole bool
}{
	// OpenAI's own stream (gpt-4o-mini); corvid's openai: preset speaks
	// Responses, so the OpenAI-compatible relay preset serves it.
	{"openai via openrouter", "fantasy-gpt-4o-mini-chat-multi_tool_streaming.yaml", preset("openrouter", "openai/gpt-4o-mini"), false},
	// api.groq.com, moonshotai/kimi-k2-instruct-0905: both calls whole,
	// one chunk each, ids "functions.add:0" and "functions.multiply:1".
	{"groq", "fantasy-kimi-k2-groq-multi_tool_streaming.yaml", preset("groq", "moonshotai/kimi-k2-instruct-0905"), false},
	// openrouter.ai, deepseek/deepseek-v3.2 (served by AtlasCloud): text,
	// then each call's name and arguments in separate chunks.
	{"openrouter deepseek", "fantasy-deepseek-v3.2-openrouter-multi_tool_streaming.yaml", preset("openrouter", "deepseek/deepseek-v3.2"), false},
	// api.x.ai, grok-4-fast (answered as grok-4-fast-reasoning), not
	// streamed: two tool calls with empty content; its reasoning tokens are
	// counted in usage only.
	{"xai", "fantasy-grok-4-fast-xai-multi_tool.yaml", preset("xai", "grok-4-fast"), true},
}

// TestParallelToolCallsAtTwoIndexesEachRunAndEachGetsAToolMessage replays
// each parallel cassette. corvid must show each call as its own tool call
// (recorded id, name, reassembled arguments), run both (corvid has neither
// tool, so both fail), stream the recorded answer, and send the follow-up
// in the layout the real service accepted: one assistant message with the
// streamed text and both tool_calls (ids, names and arguments as
// accepted), then one tool message per tool_call_id, in order.
func TestParallelToolCallsAtTwoIndexesEachRunAndEachGetsAToolMessage(t *testing.T) {
	for _, tc := range parallelCassettes {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkParallelCassette(t, tc.file, tc.p, tc.whole)
		})
	}
}

func checkParallelCassette(t *testing.T, file string, p replay.Provider, whole bool) {
	cas := replay.GoVCR(t, replay.Read(t, file))
	if len(cas) != 2 {
		t.Fatalf("cassette has %d interactions, want 2", len(cas))
	}
	responses := replay.Responses(cas)
	chunks := func(i int) []byte { return sseChunks(cas[i].Response.Body) }
	if whole {
		for i := range responses {
			responses[i] = replay.ChatChunks(completionStream(t, cas[i].Response.Body))
		}
		chunks = func(i int) []byte { return completionStream(t, cas[i].Response.Body) }
	}
	rec := readRecording(t, chunks(0))
	if len(rec.calls) != 2 || rec.calls[0].id == rec.calls[1].id {
		t.Fatalf("recorded stream has calls %+v; this test needs two at distinct indexes", rec.calls)
	}
	final := readRecording(t, chunks(1))
	answer := final.text
	var acc replay.Request
	acc.Body = cas[1].RequestBody
	accMsgs := acc.Items(t, "messages")
	accAsst := replay.Where(accMsgs, "role", "assistant")
	accTools := replay.Where(accMsgs, "role", "tool")
	if len(accAsst) != 1 || len(accAsst[0]["tool_calls"].([]any)) != 2 || len(accTools) != 2 {
		t.Fatalf("accepted follow-up is not one assistant message with 2 tool_calls and 2 tool messages: %s", acc.Body)
	}

	srv := replay.New(t, responses...)
	c := replay.Open(t, p, srv, nil)
	c.MustPrompt(t, c.SID, "Add and multiply the number 2 and 3", "end_turn")
	ups := c.Updates(c.SID)

	calls := testkit.OfKind(ups, "tool_call")
	if len(calls) != len(rec.calls) {
		t.Fatalf("%d tool_call updates, want %d (one per recorded index)", len(calls), len(rec.calls))
	}
	for i, want := range rec.calls {
		if calls[i].ToolCallID != want.id || calls[i].Title != want.name {
			t.Errorf("tool_call %d is %s %q, recorded %s %q", i, calls[i].ToolCallID, calls[i].Title, want.id, want.name)
		}
		var got, w any
		if err := json.Unmarshal(calls[i].RawInput, &got); err != nil || json.Unmarshal([]byte(want.args), &w) != nil || js(got) != js(w) {
			t.Errorf("tool_call %d rawInput %s, recorded arguments %q", i, calls[i].RawInput, want.args)
		}
		if !finished(ups, want.id) {
			t.Errorf("tool call %s (%s) never finished: corvid did not run it", want.id, want.name)
		}
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != rec.text+answer {
		t.Errorf("message %q, want the recorded %q", got, rec.text+answer)
	}
	// used is the last response's whole context: its total_tokens, which
	// counts the reasoning tokens some services leave out of
	// completion_tokens (xAI).
	if total, ok := final.usage["total_tokens"].(float64); ok {
		if used, _ := c.Used(t); used != int64(total) {
			t.Errorf("usage_update used %d, want the recorded total_tokens %v (usage %s)", used, total, js(final.usage))
		}
	}

	reqs := srv.MustRequests(t, 2)
	a := checkToolFollowUp(t, reqs[1], rec)
	// Field by field against the accepted assistant message, and no field
	// the accepted one lacks (some of these APIs refuse unknown fields);
	// content may be sent empty where the accepted one left it out.
	if want := accAsst[0]["content"]; want != nil && a["content"] != want {
		t.Errorf("follow-up assistant content %q, accepted %q", a["content"], want)
	}
	for k := range a {
		if _, ok := accAsst[0][k]; !ok && k != "content" {
			t.Errorf("follow-up assistant message has %q, which the accepted one has not: %s", k, js(a))
		}
	}
	got, _ := a["tool_calls"].([]any)
	for k, x := range accAsst[0]["tool_calls"].([]any) {
		w := x.(map[string]any)
		if k >= len(got) {
			break
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
	tools := replay.Where(ms, "role", "tool")
	if len(tools) != len(accTools) {
		t.Errorf("follow-up has %d tool messages, the accepted one %d", len(tools), len(accTools))
	}
	// The accepted order: the assistant message, then its tool messages.
	for i, m := range ms {
		if m["role"] != "assistant" {
			continue
		}
		for k := range accTools {
			if i+1+k >= len(ms) || ms[i+1+k]["role"] != "tool" || ms[i+1+k]["tool_call_id"] != accTools[k]["tool_call_id"] {
				t.Errorf("message %d after the assistant one is not the tool message for %v: %s", i+1+k, accTools[k]["tool_call_id"], reqs[1].Body)
			}
		}
	}
	validateMessages(t, reqs[1])
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
