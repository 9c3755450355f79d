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

// TestParallelToolCallsAtTwoIndexesEachRunAndEachGetsAToolMessage replays
// a real gpt-4o-mini Chat Completions stream (charmbracelet/fantasy's
// go-vcr cassette, see ../SOURCES-openai.md) with two tool calls at index
// 0 and 1 (add, multiply; arguments in pieces), through an
// OpenAI-compatible preset, then the recorded text answer. The cassette's
// second request is the follow-up the real API accepted: one assistant
// message with both tool_calls, then one tool message per tool_call_id, in
// order. corvid must show each call as its own tool call, run both (corvid
// has neither tool, so both fail) and send the accepted layout.
func TestParallelToolCallsAtTwoIndexesEachRunAndEachGetsAToolMessage(t *testing.T) {
	cas := replay.GoVCR(t, replay.Read(t, "fantasy-gpt-4o-mini-chat-multi_tool_streaming.yaml"))
	if len(cas) != 2 {
		t.Fatalf("cassette has %d interactions, want 2", len(cas))
	}
	rec := readRecording(t, sseChunks(cas[0].Response.Body))
	if len(rec.calls) != 2 || rec.calls[0].id == rec.calls[1].id {
		t.Fatalf("recorded stream has calls %+v; this test needs two at distinct indexes", rec.calls)
	}
	answer := readRecording(t, sseChunks(cas[1].Response.Body)).text
	var acc replay.Request
	acc.Body = cas[1].RequestBody
	accMsgs := acc.Items(t, "messages")
	accAsst := replay.Where(accMsgs, "role", "assistant")
	accTools := replay.Where(accMsgs, "role", "tool")
	if len(accAsst) != 1 || len(accAsst[0]["tool_calls"].([]any)) != 2 || len(accTools) != 2 {
		t.Fatalf("accepted follow-up is not one assistant message with 2 tool_calls and 2 tool messages: %s", acc.Body)
	}

	srv := replay.New(t, replay.Responses(cas)...)
	c := replay.Open(t, preset("openrouter", "openai/gpt-4o-mini"), srv, nil)
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
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != answer {
		t.Errorf("message %q, want the recorded %q", got, answer)
	}

	reqs := srv.MustRequests(t, 2)
	checkToolFollowUp(t, reqs[1], rec)
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
