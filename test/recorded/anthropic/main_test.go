// Package anthropic replays real recorded Anthropic Messages API traffic
// (see ../SOURCES.md) to the built corvid over ACP and checks what corvid
// shows the editor and what it sends back, against the requests the real
// API accepted where the recording has them, otherwise against the
// documented rules.
//
//	go test ./test/recorded/anthropic/
package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// fixtures are the recordings in testdata and their sha256: they stay
// byte-identical to their sources.
var fixtures = map[string]string{
	"anthropic-code-execution-20260120-prompt-cache.1.chunks.txt":               "54fd160c9ef4754f95977585ebc8f77438ff13a1734ab246d7ec3592d3e9b3c4",
	"anthropic-clear-thinking.1.chunks.txt":                                     "6399830f9a6aa97a14dd4ac44e6f73cf92268eb54c745821c064245effdd2973",
	"anthropic-text.chunks.txt":                                                 "12798adc987ad4bed12408a64c37f9816be3182ebe48c7355f0bf36b29f40095",
	"fantasy-claude-sonnet-4-multi_tool_streaming.yaml":                         "d092a4caebf868427ff04de3af59ee639fc8146e31b2295491ae668441ee804d",
	"fantasy-claude-sonnet-4-thinking-streaming.yaml":                           "9af4ca71c085492e3fec4ddf8fc7d7d6531e3cd5a288c912c0758a37fba921b4",
	"anthropic-tool-no-args.chunks.txt":                                         "3a9c4fc34c0e6c9afc2bd648ae9d6553da7817c936b7a469f281bdf9688a3433",
	"test_anthropic_opus_46_adaptive_thinking_accepts_tool_output_unified.yaml": "1b2324637e35eea3ff9574f056d61a54fd139e9643e592bd2e39d21c7b58bb96",
	"test_anthropic_model_thinking_part_redacted.yaml":                          "6cc6b2010967b98c5f0d526da91ea612ab41b748fb65412a6fb46401decdc8b2",
	"test_anthropic_model_thinking_part_redacted_stream.yaml":                   "f002985847488425d8604efaf9c79e9f910761e3f08f32457537b04241846a84",
}

func TestFixturesAreByteIdentical(t *testing.T) { replay.CheckFixtures(t, fixtures) }

func start(t *testing.T, model string, responses ...replay.Response) *replay.Run {
	t.Helper()
	return replay.Start(t, replay.New(t, responses...), "ANTHROPIC_BASE_URL", "anthropic:"+model)
}

// chunks is a chunk-file fixture framed as the SSE stream Anthropic sends
// (each event named by its type).
func chunks(t *testing.T, name string) replay.Response {
	return replay.Chunks(replay.Read(t, name), true)
}

// request is the part of a Messages API request the tests compare.
type request struct {
	Model     string           `json:"model"`
	MaxTokens int              `json:"max_tokens"`
	Stream    bool             `json:"stream"`
	Thinking  map[string]any   `json:"thinking"`
	Output    map[string]any   `json:"output_config"`
	System    json.RawMessage  `json:"system"`
	Tools     []map[string]any `json:"tools"`
	Messages  []struct {
		Role    string           `json:"role"`
		Content []map[string]any `json:"content"`
	} `json:"messages"`
}

func decode(t *testing.T, raw []byte) request {
	t.Helper()
	var r request
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("request body: %v\n%s", err, raw)
	}
	return r
}

// block is one content block as a stream recorded it, reassembled.
type block struct {
	Type, Text, Thinking, Signature, Data, ID, Name string
	Input                                           json.RawMessage
}

// blocks reassembles the content blocks of a recorded event stream, given
// the data of its events in order: what the API says the assistant turn
// was, to compare with what corvid sends back.
func blocks(t *testing.T, events [][]byte) []block {
	t.Helper()
	var out []block
	var partial bytes.Buffer
	for _, data := range events {
		var ev struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock block  `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Thinking    string `json:"thinking"`
				Signature   string `json:"signature"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("recorded event: %v: %s", err, data)
		}
		switch ev.Type {
		case "content_block_start":
			out = append(out, ev.ContentBlock)
			partial.Reset()
		case "content_block_delta":
			b := &out[len(out)-1]
			b.Text += ev.Delta.Text
			b.Thinking += ev.Delta.Thinking
			b.Signature += ev.Delta.Signature
			partial.WriteString(ev.Delta.PartialJSON)
		case "content_block_stop":
			b := &out[len(out)-1]
			if b.Type == "tool_use" {
				b.Input = json.RawMessage(partial.Bytes())
				if partial.Len() == 0 {
					b.Input = json.RawMessage("{}")
				}
			}
		}
	}
	return out
}

// sseEvents are the data of an SSE body's events.
func sseEvents(body []byte) [][]byte {
	var out [][]byte
	for line := range bytes.Lines(body) {
		if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			out = append(out, bytes.TrimSpace(d))
		}
	}
	return out
}

// sameBlock compares a block corvid sent back with the recorded one: type
// and every field the API defines for that type, unmodified.
func sameBlock(t *testing.T, where string, got map[string]any, want block) {
	t.Helper()
	str := func(k string) string { s, _ := got[k].(string); return s }
	if str("type") != want.Type {
		t.Errorf("%s: type %q, recorded %q", where, str("type"), want.Type)
		return
	}
	switch want.Type {
	case "text":
		if str("text") != want.Text {
			t.Errorf("%s: text %q, recorded %q", where, str("text"), want.Text)
		}
	case "thinking":
		if str("thinking") != want.Thinking || str("signature") != want.Signature {
			t.Errorf("%s: thinking block changed: %v", where, got)
		}
	case "redacted_thinking":
		if _, cached := got["cache_control"]; str("data") != want.Data || len(got) != 2 && !(cached && len(got) == 3) {
			t.Errorf("%s: redacted_thinking %v, want exactly {type, data: recorded data (%d bytes)}", where, got, len(want.Data))
		}
	case "tool_use":
		in, _ := json.Marshal(got["input"])
		if str("id") != want.ID || str("name") != want.Name || !jsonEqual(in, want.Input) {
			t.Errorf("%s: tool_use %v, recorded %s %s %s", where, got, want.ID, want.Name, want.Input)
		}
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
