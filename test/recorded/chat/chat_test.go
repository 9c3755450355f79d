// Package chat replays real Chat Completions recordings of the
// OpenAI-compatible presets (DeepSeek, Mistral, Groq, xAI; OpenRouter and
// Ollama by their documented shapes) to the built corvid over ACP, kept
// byte-identical in testdata/ (sources in test/recorded/SOURCES-openai.md),
// and checks what the editor sees and the follow-up requests corvid sends.
//
//	go test ./test/recorded/chat/
package chat

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestFixturesAreByteIdenticalToTheirSources(t *testing.T) { replay.CheckSums(t) }

func preset(name, model string) replay.Provider {
	up := strings.ToUpper(name)
	return replay.Provider{Model: name + ":" + model, KeyVar: up + "_API_KEY", BaseVar: up + "_BASE_URL", Suffix: "/v1"}
}

// recorded is what a recorded stream says, read independently of corvid.
type recorded struct {
	reasoning, text string
	calls           []recCall
	usage           map[string]any
}

type recCall struct{ id, name, args string }

func readRecording(t *testing.T, chunks []byte) recorded {
	t.Helper()
	var r recorded
	byIndex := map[float64]int{}
	for _, ev := range replay.Events(t, chunks) {
		if u, ok := ev["usage"].(map[string]any); ok {
			r.usage = u
		}
		choices, _ := ev["choices"].([]any)
		for _, c := range choices {
			d := c.(map[string]any)["delta"].(map[string]any)
			for _, k := range []string{"reasoning_content", "reasoning"} {
				if s, ok := d[k].(string); ok {
					r.reasoning += s
				}
			}
			switch content := d["content"].(type) {
			case string:
				r.text += content
			case []any: // Mistral: typed parts
				for _, p := range content {
					part := p.(map[string]any)
					switch part["type"] {
					case "text":
						r.text += part["text"].(string)
					case "thinking":
						for _, th := range part["thinking"].([]any) {
							r.reasoning += th.(map[string]any)["text"].(string)
						}
					}
				}
			}
			tcs, _ := d["tool_calls"].([]any)
			for _, x := range tcs {
				tc := x.(map[string]any)
				idx, _ := tc["index"].(float64)
				i, ok := byIndex[idx]
				if !ok {
					i = len(r.calls)
					byIndex[idx] = i
					r.calls = append(r.calls, recCall{})
				}
				if id, _ := tc["id"].(string); id != "" {
					r.calls[i].id = id
				}
				fn := tc["function"].(map[string]any)
				if n, _ := fn["name"].(string); n != "" {
					r.calls[i].name = n
				}
				a, _ := fn["arguments"].(string)
				r.calls[i].args += a
			}
		}
	}
	return r
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkToolFollowUp asserts the follow-up request carries the recorded
// call on an assistant message and a tool message answering it, and
// returns that assistant message.
func checkToolFollowUp(t *testing.T, req replay.Request, rec recorded) map[string]any {
	t.Helper()
	ms := req.Items(t, "messages")
	as := replay.Where(ms, "role", "assistant")
	if len(as) != 1 {
		t.Fatalf("follow-up has %d assistant messages, want 1: %s", len(as), req.Body)
	}
	tcs, _ := as[0]["tool_calls"].([]any)
	if len(tcs) != len(rec.calls) {
		t.Fatalf("follow-up assistant message has %d tool calls, recorded %d: %s", len(tcs), len(rec.calls), js(as[0]))
	}
	tools := replay.Where(ms, "role", "tool")
	for i, x := range tcs {
		tc := x.(map[string]any)
		fn := tc["function"].(map[string]any)
		want := rec.calls[i]
		if tc["id"] != want.id || tc["type"] != "function" || fn["name"] != want.name {
			t.Errorf("tool call %d: %s, recorded id %q name %q", i, js(tc), want.id, want.name)
		}
		var got, rc any
		if json.Unmarshal([]byte(fn["arguments"].(string)), &got) != nil || json.Unmarshal([]byte(want.args), &rc) != nil || js(got) != js(rc) {
			t.Errorf("tool call %d arguments %v, recorded %q", i, fn["arguments"], want.args)
		}
		if i >= len(tools) || tools[i]["tool_call_id"] != want.id {
			t.Errorf("no tool message answers %s: %s", want.id, js(tools))
		}
	}
	return as[0]
}

// TestDeepSeekReasonerToolLoopSendsReasoningContentBack replays a real
// deepseek-reasoner stream that thinks and then calls a tool. In thinking
// mode with tools, DeepSeek requires the assistant message that carries the
// tool calls to come back with its reasoning_content, or it refuses the
// next request; so the follow-up must carry the recorded reasoning
// verbatim, next to the recorded call.
func TestDeepSeekReasonerToolLoopSendsReasoningContentBack(t *testing.T) {
	first := replay.Read(t, "deepseek-tool-call.chunks.txt")
	second := replay.Read(t, "deepseek-reasoning.chunks.txt")
	srv := replay.New(t, replay.ChatChunks(first), replay.ChatChunks(second))
	c := replay.Open(t, preset("deepseek", "deepseek-reasoner"), srv, nil)
	c.MustPrompt(t, c.SID, "What is the weather in San Francisco?", "end_turn")
	rec1, rec2 := readRecording(t, first), readRecording(t, second)
	ups := c.Updates(c.SID)
	if got := testkit.TextOf(ups, "agent_thought_chunk"); got != rec1.reasoning+rec2.reasoning {
		t.Errorf("thought chunks %q, want the recorded reasoning of both responses", got)
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != rec2.text {
		t.Errorf("message %q, want the recorded %q", got, rec2.text)
	}
	reqs := srv.MustRequests(t, 2)
	a := checkToolFollowUp(t, reqs[1], rec1)
	if a["reasoning_content"] != rec1.reasoning {
		t.Errorf("the assistant message with tool calls has reasoning_content %s, want the recorded reasoning (%d chars); DeepSeek refuses a thinking-mode tool loop without it", js(a["reasoning_content"]), len(rec1.reasoning))
	}
	validateMessages(t, reqs[1])
}

// TestMistralMagistralContentArraysBecomeThoughtsAndText replays a real
// magistral-medium stream whose delta.content is a list of typed parts:
// "thinking" parts (themselves lists of text parts) and "text" parts. The
// editor must get the thinking as thought chunks and the text as message
// chunks, never the parts' JSON.
func TestMistralMagistralContentArraysBecomeThoughtsAndText(t *testing.T) {
	rec := replay.Read(t, "mistral-reasoning.chunks.txt")
	srv := replay.New(t, replay.ChatChunks(rec))
	c := replay.Open(t, preset("mistral", "magistral-medium-2507"), srv, nil)
	c.MustPrompt(t, c.SID, "What is 2+2?", "end_turn")
	want := readRecording(t, rec)
	if want.reasoning == "" || want.text == "" {
		t.Fatalf("the recording has reasoning %q and text %q; this test needs both", want.reasoning, want.text)
	}
	ups := c.Updates(c.SID)
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != want.text {
		t.Errorf("message %q, want the recorded text parts %q", got, want.text)
	}
	if got := testkit.TextOf(ups, "agent_thought_chunk"); got != want.reasoning {
		t.Errorf("thought chunks %q, want the recorded thinking parts %q", got, want.reasoning)
	}
	if used, _ := c.Used(t); used != int64(want.usage["total_tokens"].(float64)) {
		t.Errorf("usage_update used %d, want the recorded total_tokens %v", used, want.usage["total_tokens"])
	}
}

// TestMistralToolCallWithoutIndexRunsAndItsResultGoesBack replays a real
// mistral-small stream that sends a whole tool call in one chunk, without
// the "index" field OpenAI sends; the call must run and the follow-up carry
// it with its result.
func TestMistralToolCallWithoutIndexRunsAndItsResultGoesBack(t *testing.T) {
	first := replay.Read(t, "mistral-tool-call.chunks.txt")
	second := replay.Read(t, "mistral-text.chunks.txt")
	srv := replay.New(t, replay.ChatChunks(first), replay.ChatChunks(second))
	c := replay.Open(t, preset("mistral", "mistral-small-latest"), srv, nil)
	c.MustPrompt(t, c.SID, "What is the weather in San Francisco?", "end_turn")
	reqs := srv.MustRequests(t, 2)
	a := checkToolFollowUp(t, reqs[1], readRecording(t, first))
	if _, ok := a["reasoning_content"]; ok {
		t.Errorf("Mistral got reasoning_content, a field its API does not document: %s", js(a))
	}
	validateMessages(t, reqs[1])
	if got, want := testkit.TextOf(c.Updates(c.SID), "agent_message_chunk"), readRecording(t, second).text; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestGatewayToolCallAtASparseIndexRunsAndGoesBack replays a live trace of
// Claude behind an OpenAI-compatible gateway (already SSE-framed): text,
// then a tool call whose first and only index is 1, with an empty
// arguments piece. The call must reach the editor with its reassembled
// input and go back with its id in the follow-up.
func TestGatewayToolCallAtASparseIndexRunsAndGoesBack(t *testing.T) {
	sse := replay.Read(t, "anthropic-fallback-tool-call.sse")
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	srv := replay.New(t,
		replay.Response{Header: h, Body: sse},
		replay.ChatChunks(replay.Read(t, "mistral-text.chunks.txt")))
	c := replay.Open(t, preset("openrouter", "anthropic/claude-haiku-4.5"), srv, nil)
	c.MustPrompt(t, c.SID, "Read a.txt", "end_turn")
	calls := testkit.OfKind(c.Updates(c.SID), "tool_call")
	if len(calls) != 1 || calls[0].ToolCallID != "toolu_sanitized" {
		t.Fatalf("tool_call updates %+v, want one for toolu_sanitized", calls)
	}
	var in map[string]any
	if err := json.Unmarshal(calls[0].RawInput, &in); err != nil || in["path"] != "a.txt" {
		t.Errorf("tool call input %s, want path a.txt reassembled from the pieces", calls[0].RawInput)
	}
	reqs := srv.MustRequests(t, 2)
	a := checkToolFollowUp(t, reqs[1], recorded{calls: []recCall{{id: "toolu_sanitized", name: "read_file", args: `{"path": "a.txt"}`}}})
	if a["content"] != "Reading it." {
		t.Errorf("follow-up assistant content %v, want the streamed text \"Reading it.\"", a["content"])
	}
	validateMessages(t, reqs[1])
}
