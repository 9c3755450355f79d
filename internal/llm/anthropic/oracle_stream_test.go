package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// The official SDK is the oracle for reading the stream: every real
// recorded Anthropic stream (the recorded suite's fixtures and the SDK's
// own cassettes) is read by corvid over HTTP and, from the same bytes, by
// the SDK's stream decoder, both through the translation corvid ran on
// the SDK (sdkTranslator) and through the SDK's accumulator
// (Message.Accumulate). corvid's events must be the SDK path's, event for
// event, and the message they add up to must be the accumulator's.

const recordedDir = "../../../test/recorded/anthropic/testdata"

// sdkModuleCassettes are the SDK's go-vcr recordings of the real API (see
// test/recorded/SOURCES.md), with their sha256.
var sdkModuleCassettes = map[string]string{
	"toolrunner/testdata/cassettes/tool_runner_streaming_all.yaml":   "75becdc174824cba58a74e294ca41e76e679f2e1cc5ab3dda341413ccf4928b6",
	"toolrunner/testdata/cassettes/tool_runner_next_streaming.yaml":  "d5756e713a85fc54f407936c3dced485db48b8d41433b45990443195636b9b2d",
	"toolrunner/testdata/cassettes/tool_runner_concurrent.yaml":      "afed25f2feb858b1cc1b8f1908c59ec2434c7485702c0562bad5e5ea7528a990",
	"toolrunner/testdata/cassettes/tool_runner_tool_call_error.yaml": "cb26c780eabec2f46eeaa701ee8878fbb310b292fd4415eba8e2640c949359d0",
}

// recordedStream is one recorded response body that is an event stream.
type recordedStream struct {
	name string
	body []byte
}

func recordedStreams(t *testing.T) []recordedStream {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(recordedDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var out []recordedStream
	add := func(name string, in []replay.Interaction) {
		for i, it := range in {
			if bytes.Contains(it.Response.Body, []byte("message_start")) {
				out = append(out, recordedStream{fmt.Sprintf("%s#%d", name, i), it.Response.Body})
			}
		}
	}
	for _, name := range []string{
		"anthropic-text.chunks.txt",
		"anthropic-clear-thinking.1.chunks.txt",
		"anthropic-tool-no-args.chunks.txt",
		"anthropic-code-execution-20260120-prompt-cache.1.chunks.txt",
	} {
		out = append(out, recordedStream{name, replay.Chunks(read(name), true).Body})
	}
	for _, name := range []string{
		"test_anthropic_model_thinking_part_redacted.yaml",
		"test_anthropic_model_thinking_part_redacted_stream.yaml",
		"test_anthropic_opus_46_adaptive_thinking_accepts_tool_output_unified.yaml",
	} {
		add(name, replay.Cassette(t, read(name)))
	}
	add("fantasy-claude-sonnet-4-multi_tool_streaming.yaml", replay.GoVCR(t, read("fantasy-claude-sonnet-4-multi_tool_streaming.yaml")))
	for rel, sum := range sdkModuleCassettes {
		add(filepath.Base(rel), replay.GoVCR(t, replay.ModuleFile(t, "github.com/anthropics/anthropic-sdk-go/v2", rel, sum)))
	}
	return out
}

// corvidRead streams body to corvid's provider over HTTP and returns its
// events and the error that ended them.
func corvidRead(t *testing.T, body []byte) ([]llm.Event, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	m, err := New(llm.ProviderConfig{Provider: "anthropic", Model: "claude-test-1", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return collect(t.Context(), m, hi())
}

// sdkRead reads body with the SDK's stream decoder and turns the events
// into llm.Events as corvid did on the SDK, ending as it ended; it also
// returns the SDK's accumulated message.
func sdkRead(t *testing.T, body []byte) ([]llm.Event, error, anthropic.Message) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/v1/messages", nil)
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(body)), Request: req}
	stream := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
	defer stream.Close()
	var acc anthropic.Message
	var tr sdkTranslator
	var evs []llm.Event
	for stream.Next() {
		ev := stream.Current()
		if err := acc.Accumulate(ev); err != nil {
			t.Fatalf("the SDK's accumulator: %v", err)
		}
		evs = append(evs, tr.translate(ev)...)
		if tr.err != nil {
			return evs, tr.err, acc
		}
		if tr.done {
			return evs, nil, acc
		}
	}
	if err := stream.Err(); err != nil {
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) {
			return evs, apiError(apiErr.StatusCode, apiErrorBody{Type: string(apiErr.Type()), Message: apiErr.Message}, nil), acc
		}
		return evs, classify(err, "http://127.0.0.1"), acc
	}
	if ev, ok := tr.finish(); ok {
		return append(evs, ev), nil, acc
	}
	return evs, errors.New("Anthropic stream ended early: the connection closed before the response was complete"), acc
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRecordedStreamsReadAsTheSDKReadsThem(t *testing.T) {
	t.Parallel()
	streams := recordedStreams(t)
	if len(streams) < 11 {
		t.Fatalf("only %d recorded streams found", len(streams))
	}
	for _, s := range streams {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			got, err := corvidRead(t, s.body)
			if err != nil {
				t.Fatalf("corvid: %v", err)
			}
			want, sdkErr, acc := sdkRead(t, s.body)
			if sdkErr != nil {
				t.Fatalf("SDK: %v", sdkErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("events differ from the SDK path's\ncorvid: %+v\nSDK:    %+v", got, want)
			}
			sameAsAccumulated(t, got, acc)
		})
	}
}

// sameAsAccumulated compares the message corvid's events add up to with
// the SDK's accumulated message: the content blocks corvid keeps, in
// order and unmodified, the stop reason and the token counts.
func sameAsAccumulated(t *testing.T, evs []llm.Event, acc anthropic.Message) {
	t.Helper()
	var want []llm.Part
	for _, b := range acc.Content {
		switch b.Type {
		case "text":
			want = append(want, llm.Part{Type: llm.PartText, Text: b.Text})
		case "thinking":
			want = append(want, llm.Part{Type: llm.PartThinking, Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			want = append(want, llm.Part{Type: llm.PartThinking, Signature: redactedPrefix + b.Data})
		case "tool_use":
			want = append(want, llm.Part{Type: llm.PartToolUse, ToolUseID: b.ID, ToolName: b.Name, Input: b.Input})
		}
		// Server tool blocks run on Anthropic's side; corvid keeps none.
	}
	got := assistantMessage(evs).Parts
	// A text block that streamed no text leaves no part in corvid.
	want = slicesDeleteEmptyText(want)
	if len(got) != len(want) {
		t.Fatalf("corvid's message has %d parts, the SDK's accumulated message %d\ncorvid: %+v\nSDK:    %+v", len(got), len(want), got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		gi, wi := g.Input, w.Input
		g.Input, w.Input = nil, nil
		if !reflect.DeepEqual(g, w) || (gi != nil || wi != nil) && !sameJSON(t, gi, wi) {
			t.Errorf("part %d: corvid %+v %s, the SDK's %+v %s", i, g, gi, w, wi)
		}
	}
	stop := evs[len(evs)-1]
	if stop.Type != llm.EventStop || stop.StopReason != stopReason(string(acc.StopReason)) {
		t.Errorf("stop %+v; the SDK's stop_reason is %q", stop, acc.StopReason)
	}
	usage := eventsOf(evs, llm.EventUsage)
	if len(usage) != 1 {
		t.Fatalf("%d usage events, want 1", len(usage))
	}
	u := acc.Usage
	wantUsage := llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
	if usage[0].Usage != wantUsage {
		t.Errorf("usage %+v, the SDK's %+v", usage[0].Usage, wantUsage)
	}
}

func slicesDeleteEmptyText(parts []llm.Part) []llm.Part {
	out := parts[:0]
	for _, p := range parts {
		if p.Type != llm.PartText || p.Text != "" {
			out = append(out, p)
		}
	}
	return out
}

// Streams that go wrong, made from a real recording: corvid ends them as
// the SDK path ended them, with the same events first.
func TestBrokenStreamsEndAsOnTheSDK(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(recordedDir, "anthropic-text.chunks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	full := replay.Chunks(raw, true).Body
	events := bytes.SplitAfter(full, []byte("\n\n"))
	first := func(n int) []byte { return bytes.Join(events[:n], nil) }
	const overloaded = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"
	cases := map[string][]byte{
		"error event after text":     append(first(5), overloaded...),
		"error event first":          []byte(overloaded),
		"cut after text":             first(6),
		"cut inside an event":        append(first(6), "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delt"...),
		"no message_stop":            first(len(events) - 2),
		"malformed event":            append(first(4), "event: content_block_delta\ndata: {\"type\":\n\n"...),
		"comments and other fields":  append([]byte(": hello\nid: 1\nretry: 10\n\n"), full...),
		"empty data":                 append([]byte("event: ping\ndata:\n\n"), full...),
		"not an event stream at all": []byte("<html>Bad gateway</html>\n"),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := corvidRead(t, body)
			want, sdkErr, _ := sdkRead(t, body)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("events differ\ncorvid: %+v\nSDK:    %+v", got, want)
			}
			if g, w := errText(err), errText(sdkErr); g != w {
				t.Errorf("error %q, on the SDK %q", g, w)
			}
		})
	}
}

// Where corvid reads more than the SDK did: a stream whose events carry no
// event name (the SDK skipped every unnamed event), and one with CRLF line
// ends (the SDK never saw the blank line that ends an event), give the
// events of the recorded stream as the SDK path reads it.
func TestUnnamedAndCRLFStreamsReadAsTheRecordedStream(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(recordedDir, "anthropic-clear-thinking.1.chunks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	named := replay.Chunks(raw, true).Body
	want, sdkErr, _ := sdkRead(t, named)
	if sdkErr != nil {
		t.Fatal(sdkErr)
	}
	for name, body := range map[string][]byte{
		"unnamed": replay.Chunks(raw, false).Body,
		"CRLF":    bytes.ReplaceAll(named, []byte("\n"), []byte("\r\n")),
	} {
		got, err := corvidRead(t, body)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: events %+v, %v\nwant %+v", name, got, err, want)
		}
	}
}
