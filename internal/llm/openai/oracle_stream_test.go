package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// The recorded streams of test/recorded (real traffic, kept byte-identical
// to their sources there) are read twice here: by corvid's provider, and by
// the official SDK's stream decoder and, for Chat Completions, its
// ChatCompletionAccumulator. What corvid yields must agree with what the
// SDK makes of the same bytes.

const recordedDir = "../../../test/recorded"

func readRecorded(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordedDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordedStream is one recorded answer, framed as it went over the wire.
type recordedStream struct {
	name string
	body []byte
}

func chatRecordings(t *testing.T) []recordedStream {
	var out []recordedStream
	files, _ := filepath.Glob(filepath.Join(recordedDir, "chat/testdata/*.chunks.txt"))
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		out = append(out, recordedStream{filepath.Base(f), replay.ChatChunks(raw).Body})
	}
	sseFiles, _ := filepath.Glob(filepath.Join(recordedDir, "chat/testdata/*.sse"))
	for _, f := range sseFiles {
		raw, _ := os.ReadFile(f)
		out = append(out, recordedStream{filepath.Base(f), raw})
	}
	yamls, _ := filepath.Glob(filepath.Join(recordedDir, "chat/testdata/*.yaml"))
	for _, f := range yamls {
		raw, _ := os.ReadFile(f)
		for i, it := range replay.GoVCR(t, raw) {
			if it.Response.Status == 200 && bytes.Contains(it.Response.Body, []byte("data: ")) {
				out = append(out, recordedStream{filepath.Base(f) + "#" + string(rune('0'+i)), it.Response.Body})
			}
		}
	}
	if len(out) < 12 {
		t.Fatalf("found %d chat recordings in %s", len(out), recordedDir)
	}
	return out
}

func responsesRecordings(t *testing.T) []recordedStream {
	var out []recordedStream
	files, _ := filepath.Glob(filepath.Join(recordedDir, "openai/testdata/*.chunks.txt"))
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		for i, seg := range replay.Split(raw, `"type":"response.created"`) {
			out = append(out, recordedStream{filepath.Base(f) + "#" + string(rune('0'+i)), replay.Chunks(seg, false).Body})
		}
	}
	yamls, _ := filepath.Glob(filepath.Join(recordedDir, "openai/testdata/*.yaml"))
	for _, f := range yamls {
		raw, _ := os.ReadFile(f)
		read := replay.GoVCR // charmbracelet/fantasy's go-vcr cassettes
		if !strings.HasPrefix(filepath.Base(f), "fantasy-") {
			read = replay.Cassette // pydantic-ai's VCR cassettes
		}
		for i, it := range read(t, raw) {
			if it.Response.Status == 200 && bytes.Contains(it.Response.Body, []byte("data: ")) {
				out = append(out, recordedStream{filepath.Base(f) + "#" + string(rune('0'+i)), it.Response.Body})
			}
		}
	}
	if len(out) < 7 {
		t.Fatalf("found %d responses recordings in %s", len(out), recordedDir)
	}
	return out
}

// corvidRead runs provider's model against a server answering body.
func corvidRead(t *testing.T, provider string, body []byte) ([]llm.Event, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	m, err := newModel(goldenProvider(t, provider), llm.ProviderConfig{Provider: provider, Model: "m", APIKey: "k", BaseURL: srv.URL + "/v1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []llm.Event
	for ev, err := range m.Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}}}}) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// sdkStream is the SDK's decoder over body, as NewStreaming builds it.
func sdkStream[T any](body []byte) *ssestream.Stream[T] {
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))}
	return ssestream.NewStream[T](ssestream.NewDecoder(res), nil)
}

// summary is what a stream amounts to, as compared here.
type summary struct {
	Text, Thinking string
	Calls          []call
	Sigs           []string
	Usage          *llm.Usage
	Stop           llm.StopReason
}

type call struct{ ID, Name, Args string }

func summarize(evs []llm.Event) summary {
	var s summary
	for _, e := range evs {
		switch e.Type {
		case llm.EventTextDelta:
			s.Text += e.Text
		case llm.EventThinkingDelta:
			s.Thinking += e.Text
		case llm.EventToolUseEnd:
			s.Calls = append(s.Calls, call{e.ToolUseID, e.ToolName, string(e.Input)})
		case llm.EventSignature:
			s.Sigs = append(s.Sigs, e.Text)
		case llm.EventUsage:
			u := e.Usage
			s.Usage = &u
		case llm.EventStop:
			s.Stop = e.StopReason
		}
	}
	return s
}

func compare(t *testing.T, got, want summary) {
	t.Helper()
	g, _ := json.MarshalIndent(got, "", "  ")
	w, _ := json.MarshalIndent(want, "", "  ")
	if string(g) != string(w) {
		t.Errorf("corvid read:\n%s\nthe SDK read:\n%s", g, w)
	}
}

// compactArgs is how a call's arguments reach the tool: valid JSON as sent
// (trimmed), {} for nothing.
func compactArgs(s string) string {
	return string(toolInput(s))
}

// sameStreamError checks corvid's reading of a stream the SDK ended with
// an error event: corvid fails too, with the event's code and message, and
// yields no stop.
func sameStreamError(t *testing.T, sdkErr error, evs []llm.Event, err error) {
	t.Helper()
	var se *ssestream.StreamError
	if !errors.As(sdkErr, &se) {
		t.Fatalf("SDK: %v", sdkErr)
	}
	var body struct {
		Error struct {
			Code    json.RawMessage
			Message string
		}
	}
	_ = json.Unmarshal(se.Event.Data, &body)
	code := strings.Trim(string(body.Error.Code), `"`)
	msg := strings.TrimRight(body.Error.Message[:min(60, len(body.Error.Message))], ".")
	var le *llm.Error
	if !errors.As(err, &le) || !strings.Contains(le.Message, code) || !strings.Contains(le.Message, msg) {
		t.Fatalf("corvid: %v; the SDK read the error event %s", err, se.Event.Data)
	}
	if summarize(evs).Stop != "" {
		t.Error("corvid yielded a stop after the error event")
	}
}

func TestRecordedChatStreamsAgreeWithTheSDKAccumulator(t *testing.T) {
	for _, rec := range chatRecordings(t) {
		t.Run(rec.name, func(t *testing.T) {
			evs, err := corvidRead(t, "openrouter", rec.body)
			stream := sdkStream[sdk.ChatCompletionChunk](rec.body)
			var acc sdk.ChatCompletionAccumulator
			var want summary
			var partsText strings.Builder
			parts := false
			// The accumulator adds up the usage of every chunk that has
			// one; Groq sends the same usage twice (on the finish chunk,
			// then on a usage-only chunk), so the last one is taken, as
			// OpenAI documents it: the usage chunk comes last.
			var lastUsage sdk.CompletionUsage
			// OpenRouter's delta.reasoning_details, which the SDK keeps
			// raw: the entries as streamed.
			var details []map[string]any
			for stream.Next() {
				chunk := stream.Current()
				if !acc.AddChunk(chunk) {
					t.Fatalf("the SDK's accumulator refused chunk %s", chunk.RawJSON())
				}
				if chunk.JSON.Usage.Valid() {
					lastUsage = chunk.Usage
				}
				for _, c := range chunk.Choices {
					if c.Index != 0 {
						continue
					}
					if f, ok := c.Delta.JSON.ExtraFields["reasoning_details"]; ok {
						var list []map[string]any
						_ = json.Unmarshal([]byte(f.Raw()), &list)
						details = append(details, list...)
					}
					for _, k := range []string{"reasoning_content", "reasoning"} {
						var s string
						if f, ok := c.Delta.JSON.ExtraFields[k]; ok && json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
							want.Thinking += s
							break
						}
					}
					// Mistral's typed content parts: the SDK keeps them raw.
					if raw := c.Delta.JSON.Content.Raw(); strings.HasPrefix(raw, "[") {
						parts = true
						var ps []struct {
							Type     string
							Text     string
							Thinking []struct{ Text string }
						}
						if err := json.Unmarshal([]byte(raw), &ps); err != nil {
							t.Fatal(err)
						}
						for _, p := range ps {
							partsText.WriteString(map[bool]string{true: p.Text}[p.Type == "text"])
							for _, th := range p.Thinking {
								want.Thinking += th.Text
							}
						}
					}
				}
			}
			if sdkErr := stream.Err(); sdkErr != nil {
				sameStreamError(t, sdkErr, evs, err)
				return
			}
			if err != nil {
				t.Fatalf("corvid: %v", err)
			}
			if len(acc.Choices) == 0 {
				t.Fatal("the SDK accumulated no choice")
			}
			msg := acc.Choices[0].Message
			want.Text = msg.Content + msg.Refusal
			if parts {
				want.Text = partsText.String()
			}
			for _, tc := range msg.ToolCalls {
				if tc.Function.Name != "" {
					want.Calls = append(want.Calls, call{tc.ID, tc.Function.Name, compactArgs(tc.Function.Arguments)})
				}
			}
			if u := lastUsage; u.PromptTokens > 0 || u.CompletionTokens > 0 {
				cached, written := u.PromptTokensDetails.CachedTokens, u.PromptTokensDetails.CacheWriteTokens
				out, r := u.CompletionTokens, u.CompletionTokensDetails.ReasoningTokens
				if r > 0 && u.TotalTokens >= u.PromptTokens+out+r {
					out += r
				}
				want.Usage = &llm.Usage{InputTokens: max(0, u.PromptTokens-cached-written), OutputTokens: out, CacheReadTokens: cached, CacheWriteTokens: written}
			}
			switch acc.Choices[0].FinishReason {
			case "tool_calls", "function_call":
				want.Stop = llm.StopToolUse
			case "length":
				want.Stop = llm.StopMaxTokens
			case "content_filter":
				want.Stop = llm.StopRefusal
			default:
				want.Stop = llm.StopEndTurn
				if len(want.Calls) > 0 {
					want.Stop = llm.StopToolUse
				}
			}
			got := summarize(evs)
			if len(details) > 0 {
				sameDetails(t, got.Sigs, details)
				got.Sigs = nil
			}
			compare(t, got, want)
		})
	}
}

// sameDetails checks the one signature corvid yields for a stream with
// reasoning_details against the entries as streamed: the same text and
// summary, in order, and every other entry (reasoning.encrypted: Gemini's
// thought signature) unchanged and in order. How corvid joins the pieces
// of one text entry is pinned by the recorded test against the follow-up
// request OpenRouter accepted (test/recorded/chat).
func sameDetails(t *testing.T, sigs []string, streamed []map[string]any) {
	t.Helper()
	if len(sigs) != 1 {
		t.Fatalf("corvid yielded %d signatures for a stream with reasoning_details, want 1: %q", len(sigs), sigs)
	}
	var sig struct {
		ReasoningDetails []map[string]any `json:"reasoning_details"`
	}
	if err := json.Unmarshal([]byte(sigs[0]), &sig); err != nil {
		t.Fatalf("signature %q: %v", sigs[0], err)
	}
	flat := func(list []map[string]any) (text string, others []string) {
		for _, e := range list {
			switch e["type"] {
			case "reasoning.text", "reasoning.summary":
				s, _ := e["text"].(string)
				u, _ := e["summary"].(string)
				text += s + u
			default:
				b, _ := json.Marshal(e)
				others = append(others, string(b))
			}
		}
		return text, others
	}
	gotText, gotOthers := flat(sig.ReasoningDetails)
	wt, wo := flat(streamed)
	if gotText != wt || strings.Join(gotOthers, "\n") != strings.Join(wo, "\n") {
		t.Errorf("reasoning_details corvid keeps:\n%s\nstreamed:\n%v", sigs[0], streamed)
	}
	if wt == "" && len(wo) == 0 {
		t.Error("the streamed reasoning_details carry nothing to compare")
	}
}

func TestRecordedResponsesStreamsAgreeWithTheSDK(t *testing.T) {
	for _, rec := range responsesRecordings(t) {
		t.Run(rec.name, func(t *testing.T) {
			evs, err := corvidRead(t, "openai", rec.body)
			stream := sdkStream[responses.ResponseStreamEventUnion](rec.body)
			var final *responses.Response
			var terminal string
			var sigs []string
			for stream.Next() {
				e := stream.Current()
				switch e.Type {
				case "response.output_item.done":
					// The encrypted content that goes back is the one the
					// item's done event carries (the completed event's copy
					// is encrypted anew).
					if it := e.Item; it.Type == "reasoning" && it.EncryptedContent != "" {
						sig, _ := json.Marshal(reasoningSig{ID: it.ID, EncryptedContent: it.EncryptedContent})
						sigs = append(sigs, string(sig))
					}
				case "response.completed", "response.incomplete", "response.failed":
					r := e.Response
					final, terminal = &r, e.Type
				}
			}
			if sdkErr := stream.Err(); sdkErr != nil {
				sameStreamError(t, sdkErr, evs, err)
				return
			}
			if err != nil {
				t.Fatalf("corvid: %v", err)
			}
			if final == nil {
				t.Fatal("the SDK read no terminal event")
			}
			var want summary
			for _, o := range final.Output {
				switch o.Type {
				case "message":
					for _, c := range o.Content {
						want.Text += c.Text + c.Refusal
					}
				case "reasoning":
					for _, s := range o.Summary {
						want.Thinking += s.Text
					}
				case "function_call":
					want.Calls = append(want.Calls, call{o.CallID, o.Name, compactArgs(o.Arguments.OfString)})
				}
			}
			want.Sigs = sigs
			u := final.Usage
			cached, written := u.InputTokensDetails.CachedTokens, u.InputTokensDetails.CacheWriteTokens
			want.Usage = &llm.Usage{InputTokens: max(0, u.InputTokens-cached-written), OutputTokens: u.OutputTokens, CacheReadTokens: cached, CacheWriteTokens: written}
			switch {
			case terminal == "response.incomplete" && final.IncompleteDetails.Reason == "content_filter":
				want.Stop = llm.StopRefusal
			case terminal == "response.incomplete":
				want.Stop = llm.StopMaxTokens
			case len(want.Calls) > 0:
				want.Stop = llm.StopToolUse
			default:
				want.Stop = llm.StopEndTurn
			}
			compare(t, summarize(evs), want)
		})
	}
}
