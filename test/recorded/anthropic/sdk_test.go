package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// The Anthropic Go SDK (already a dependency, go.mod) ships go-vcr
// cassettes of the real API in its module: streamed responses, and the
// follow-up requests the API accepted. The tests read them from the module
// cache, nothing is copied into this repository (SOURCES.md, "Anthropic Go
// SDK cassettes").
const sdkModule = "github.com/anthropics/anthropic-sdk-go/v2"

var sdkCassettes = map[string]string{
	"toolrunner/testdata/cassettes/tool_runner_streaming_all.yaml":   "75becdc174824cba58a74e294ca41e76e679f2e1cc5ab3dda341413ccf4928b6",
	"toolrunner/testdata/cassettes/tool_runner_next_streaming.yaml":  "d5756e713a85fc54f407936c3dced485db48b8d41433b45990443195636b9b2d",
	"toolrunner/testdata/cassettes/tool_runner_concurrent.yaml":      "afed25f2feb858b1cc1b8f1908c59ec2434c7485702c0562bad5e5ea7528a990",
	"toolrunner/testdata/cassettes/tool_runner_tool_call_error.yaml": "cb26c780eabec2f46eeaa701ee8878fbb310b292fd4415eba8e2640c949359d0",
}

func sdkCassette(t *testing.T, name string) []replay.Interaction {
	t.Helper()
	rel := "toolrunner/testdata/cassettes/" + name
	sum, ok := sdkCassettes[rel]
	if !ok {
		t.Fatalf("%s has no listed sha256", rel)
	}
	return replay.GoVCR(t, replay.ModuleFile(t, sdkModule, rel, sum))
}

type message struct {
	Role    string           `json:"role"`
	Content []map[string]any `json:"content"`
}

func messagesOf(t *testing.T, raw []byte) []message {
	t.Helper()
	var r struct {
		Messages []message `json:"messages"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("request body: %v\n%s", err, raw)
	}
	return r.Messages
}

// loopShape checks the tool-loop layout of a request's messages: a user
// turn, then pairs of an assistant turn and a user turn that holds exactly
// one tool_result per tool_use of the assistant turn before it, in the
// same order, and nothing else. Every test below checks first that the
// request the real API accepted has this shape.
func loopShape(msgs []message) error {
	if len(msgs) == 0 || msgs[0].Role != "user" {
		return fmt.Errorf("does not start with a user turn")
	}
	if len(msgs)%2 == 0 {
		return fmt.Errorf("%d messages: does not end with the tool results", len(msgs))
	}
	for i := 1; i < len(msgs); i += 2 {
		asst, user := msgs[i], msgs[i+1]
		if asst.Role != "assistant" || user.Role != "user" {
			return fmt.Errorf("messages %d,%d are %s,%s, want assistant,user", i, i+1, asst.Role, user.Role)
		}
		var ids []string
		for _, b := range asst.Content {
			if b["type"] == "tool_use" {
				id, _ := b["id"].(string)
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return fmt.Errorf("assistant turn %d has no tool_use", i)
		}
		if len(user.Content) != len(ids) {
			return fmt.Errorf("user turn %d has %d blocks for %d tool_use blocks: %v", i+1, len(user.Content), len(ids), user.Content)
		}
		for j, b := range user.Content {
			if b["type"] != "tool_result" || b["tool_use_id"] != ids[j] {
				return fmt.Errorf("user turn %d block %d is %v, want tool_result for %s", i+1, j, b, ids[j])
			}
		}
	}
	return nil
}

// sameAsAccepted compares a block corvid sent with the block of the
// request the real API accepted: same type and same value for every field
// the accepted block has (cache_control, which corvid may add, aside).
func sameAsAccepted(t *testing.T, where string, got, acc map[string]any) {
	t.Helper()
	for k, want := range acc {
		g, _ := json.Marshal(got[k])
		w, _ := json.Marshal(want)
		if !jsonEqual(g, w) {
			t.Errorf("%s: %s is %s, the accepted request has %s", where, k, g, w)
		}
	}
}

// resultShape checks corvid's tool_result for a failed call against the
// error result the real API accepted: the same fields (plus cache_control
// at most), is_error true, content as text.
func resultShape(t *testing.T, where string, got, acc map[string]any) {
	t.Helper()
	for k := range got {
		if _, ok := acc[k]; !ok && k != "cache_control" {
			t.Errorf("%s: field %q is not in the accepted error result %v", where, k, acc)
		}
	}
	if got["is_error"] != true || acc["is_error"] != true {
		t.Errorf("%s: is_error %v (accepted: %v), want true", where, got["is_error"], acc["is_error"])
	}
	switch c := got["content"].(type) {
	case string:
		if c == "" {
			t.Errorf("%s: empty content", where)
		}
	case []any:
		for _, b := range c {
			if m, _ := b.(map[string]any); m["type"] != "text" || m["text"] == "" {
				t.Errorf("%s: content block %v, want {type: text, text}", where, b)
			}
		}
	default:
		t.Errorf("%s: content %v, want text", where, got["content"])
	}
}

// The SDK's streamed tool loop, two requests: the recorded stream (text,
// then a tool_use whose input arrives in pieces) drives corvid; its
// follow-up carries the assistant turn exactly as the follow-up the real
// API accepted (same blocks, same id and input), then a tool_result for
// that id. get_weather is not a corvid tool, so the result is an error,
// in the shape of the error result the API accepted (tool_call_error).
func TestSDKStreamedToolLoopMatchesTheAcceptedFollowUp(t *testing.T) {
	t.Parallel()
	cas := sdkCassette(t, "tool_runner_streaming_all.yaml")
	errCas := sdkCassette(t, "tool_runner_tool_call_error.yaml")
	if len(cas) != 2 || len(errCas) < 2 {
		t.Fatalf("cassettes: %d and %d interactions", len(cas), len(errCas))
	}
	acc := messagesOf(t, cas[1].RequestBody)
	if err := loopShape(acc); err != nil || len(acc) != 3 {
		t.Fatalf("accepted follow-up (%d messages): %v", len(acc), err)
	}
	accErr := messagesOf(t, errCas[1].RequestBody)[2].Content[0]

	r := start(t, "claude-sonnet-4-5", replay.Responses(cas)...)
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Weather in SF in fahrenheit?", "end_turn")
	ups := r.Updates(sid)
	if got, want := testkit.TextOf(ups, "agent_message_chunk"), "I'll get the current weather in San Francisco for you in Fahrenheit.The current weather in San Francisco is 68 degrees Fahrenheit."; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if calls := testkit.OfKind(ups, "tool_call"); len(calls) != 1 {
		t.Errorf("%d tool_call updates, want 1", len(calls))
	}
	reqs := r.Server.MustRequests(t, 2)
	got := messagesOf(t, reqs[1].Body)
	if err := loopShape(got); err != nil || len(got) != len(acc) {
		t.Fatalf("corvid's follow-up (%d messages, accepted %d): %v\n%s", len(got), len(acc), err, reqs[1].Body)
	}
	if !hasText(got[0], "Weather in SF in fahrenheit?") {
		t.Errorf("first user turn %v lacks the prompt", got[0].Content)
	}
	if len(got[1].Content) != len(acc[1].Content) {
		t.Fatalf("assistant turn has %d blocks, accepted %d: %v", len(got[1].Content), len(acc[1].Content), got[1].Content)
	}
	for i := range acc[1].Content {
		sameAsAccepted(t, fmt.Sprintf("assistant block %d", i), got[1].Content[i], acc[1].Content[i])
	}
	resultShape(t, "tool_result", got[2].Content[0], accErr)
}

// A three-request streamed loop: two recorded streamed tool calls (the
// SDK's next_streaming and streaming_all recordings, each a real stream),
// then the recorded answer. Their order is this test's, not a recorded
// session's, so the third request is checked against the layout of the
// four-request loop the real API accepted (tool_runner_concurrent: each
// assistant tool_use answered by a user turn of tool_results, in order),
// and each assistant turn against its stream.
func TestSDKThreeRequestStreamedLoopHasTheAcceptedLayout(t *testing.T) {
	t.Parallel()
	next := sdkCassette(t, "tool_runner_next_streaming.yaml")
	all := sdkCassette(t, "tool_runner_streaming_all.yaml")
	conc := sdkCassette(t, "tool_runner_concurrent.yaml")
	if len(next) != 1 || len(all) != 2 || len(conc) != 4 {
		t.Fatalf("cassettes: %d, %d, %d interactions", len(next), len(all), len(conc))
	}
	if acc := messagesOf(t, conc[3].RequestBody); len(acc) != 7 {
		t.Fatalf("accepted request has %d messages, want 7", len(acc))
	} else if err := loopShape(acc); err != nil {
		t.Fatalf("accepted request: %v", err)
	}
	streams := [][]block{blocks(t, sseEvents(next[0].Response.Body)), blocks(t, sseEvents(all[0].Response.Body))}
	for i, s := range streams {
		if len(s) != 2 || s[1].Type != "tool_use" {
			t.Fatalf("recorded stream %d: %+v", i, s)
		}
	}

	r := start(t, "claude-sonnet-4-5", next[0].Response, all[0].Response, all[1].Response)
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Weather in SF?", "end_turn")
	if calls := testkit.OfKind(r.Updates(sid), "tool_call"); len(calls) != 2 {
		t.Errorf("%d tool_call updates, want 2", len(calls))
	}
	reqs := r.Server.MustRequests(t, 3)
	for n := 1; n <= 2; n++ {
		got := messagesOf(t, reqs[n].Body)
		if err := loopShape(got); err != nil || len(got) != 1+2*n {
			t.Fatalf("request %d (%d messages): %v\n%s", n+1, len(got), err, reqs[n].Body)
		}
		for k, s := range streams[:n] {
			asst := got[1+2*k]
			if len(asst.Content) != len(s) {
				t.Errorf("request %d, assistant turn %d: %d blocks, recorded %d: %v", n+1, k, len(asst.Content), len(s), asst.Content)
				continue
			}
			for i, b := range s {
				sameBlock(t, fmt.Sprintf("request %d, assistant turn %d, block %d", n+1, k, i), asst.Content[i], b)
			}
		}
	}
}

func hasText(m message, s string) bool {
	for _, b := range m.Content {
		if t, _ := b["text"].(string); b["type"] == "text" && strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// loopShape is the check the SDK tests lean on: it rejects a result sent
// for another call, a missing result and a result turn out of place.
func TestLoopShapeRejectsMisplacedResults(t *testing.T) {
	use := func(id string) map[string]any { return map[string]any{"type": "tool_use", "id": id} }
	res := func(id string) map[string]any { return map[string]any{"type": "tool_result", "tool_use_id": id} }
	user := message{Role: "user", Content: []map[string]any{{"type": "text", "text": "hi"}}}
	good := []message{user, {Role: "assistant", Content: []map[string]any{use("a"), use("b")}}, {Role: "user", Content: []map[string]any{res("a"), res("b")}}}
	if err := loopShape(good); err != nil {
		t.Fatalf("good loop rejected: %v", err)
	}
	for name, msgs := range map[string][]message{
		"wrong id":       {user, good[1], {Role: "user", Content: []map[string]any{res("a"), res("c")}}},
		"out of order":   {user, good[1], {Role: "user", Content: []map[string]any{res("b"), res("a")}}},
		"missing result": {user, good[1], {Role: "user", Content: []map[string]any{res("a")}}},
		"no result turn": {user, good[1]},
		"roles swapped":  {user, good[2], good[1]},
	} {
		if loopShape(msgs) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
