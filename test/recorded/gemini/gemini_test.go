package gemini

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// recordedChunks decodes a chunk file: its text, thought text, the
// signatures on its text parts, and its last usage.
type recordedChunks struct {
	text, thoughts string
	textSigs       []string
	usage          struct{ prompt, candidates, thoughts, cached int64 }
}

func readChunks(t *testing.T, raw []byte) recordedChunks {
	t.Helper()
	var r recordedChunks
	for line := range bytes.Lines(raw) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text             string `json:"text"`
						Thought          bool   `json:"thought"`
						ThoughtSignature string `json:"thoughtSignature"`
						FunctionCall     any    `json:"functionCall"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
			UsageMetadata *struct {
				PromptTokenCount        int64 `json:"promptTokenCount"`
				CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
				ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
				CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
			} `json:"usageMetadata"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("recording line: %v", err)
		}
		if u := c.UsageMetadata; u != nil {
			r.usage.prompt, r.usage.candidates, r.usage.thoughts, r.usage.cached = u.PromptTokenCount, u.CandidatesTokenCount, u.ThoughtsTokenCount, u.CachedContentTokenCount
		}
		for _, cand := range c.Candidates {
			for _, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
				case p.Thought:
					r.thoughts += p.Text
				default:
					r.text += p.Text
					if p.ThoughtSignature != "" {
						r.textSigs = append(r.textSigs, p.ThoughtSignature)
					}
				}
			}
		}
	}
	return r
}

func TestTextStreamsAndUsageIsReported(t *testing.T) {
	t.Parallel()
	rec := readChunks(t, replay.Read(t, "google-text.chunks.txt"))
	r := start(t, "gemini-3-pro-preview", chunks(t, "google-text.chunks.txt"))
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "How many r's are in strawberry?", "end_turn")
	ups := r.Updates(sid)
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != rec.text {
		t.Errorf("text %q, want the recording's %q", got, rec.text)
	}
	used, size, _ := replay.UsedOfLastUsage(t, ups)
	if want := rec.usage.prompt + rec.usage.candidates + rec.usage.thoughts; used != want {
		t.Errorf("usage used %d, want prompt %d + candidates %d + thoughts %d", used, rec.usage.prompt, rec.usage.candidates, rec.usage.thoughts)
	}
	if size != 1048576 {
		t.Errorf("usage size %d, want the catalog's 1048576", size)
	}
	req := r.Server.Requests()[0]
	if req.Path != "/v1beta/models/gemini-3-pro-preview:streamGenerateContent" || req.Query != "alt=sse" {
		t.Errorf("request %s?%s", req.Path, req.Query)
	}
	if got := req.Header.Get("X-Goog-Api-Key"); got != replay.Keys["GEMINI_API_KEY"] {
		t.Errorf("x-goog-api-key %q", got)
	}
}

// Defect 1 (text part): Gemini 3 ends a streamed answer with an empty
// text part carrying the thoughtSignature. It must go back on a text part
// with empty text, not as a thought part, and must not be merged into the
// text before it.
func TestGemini3SignatureOnEmptyTextPartGoesBackOnThatPart(t *testing.T) {
	t.Parallel()
	rec := readChunks(t, replay.Read(t, "google-text.chunks.txt"))
	if len(rec.textSigs) != 1 {
		t.Fatalf("recording has %d signed text parts, want 1", len(rec.textSigs))
	}
	r := start(t, "gemini-3-pro-preview", chunks(t, "google-text.chunks.txt"), chunks(t, "google-reasoning-gemini3.chunks.txt"))
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "How many r's are in strawberry?", "end_turn")
	r.MustPrompt(t, sid, "Are you sure?", "end_turn")
	reqs := r.Server.MustRequests(t, 2)
	b := decode(t, reqs[1].Body)
	if len(b.Contents) != 3 || b.Contents[1].Role != "model" {
		t.Fatalf("second request contents:\n%s", reqs[1].Body)
	}
	var text string
	var signed []part
	for _, p := range b.Contents[1].Parts {
		if p.Thought {
			t.Errorf("model turn sent back a thought part %+v; the recording had none", p)
		}
		if p.Text != nil {
			text += *p.Text
		}
		if p.ThoughtSignature != "" {
			signed = append(signed, p)
		}
	}
	if text != rec.text {
		t.Errorf("model turn text %q, want %q", text, rec.text)
	}
	if len(signed) != 1 {
		t.Fatalf("%d signed parts in the model turn, want 1:\n%s", len(signed), reqs[1].Body)
	}
	p := signed[0]
	if p.Text == nil || *p.Text != "" || p.FunctionCall != nil || !bytes.Equal(sigBytes(t, p.ThoughtSignature), sigBytes(t, rec.textSigs[0])) {
		t.Errorf("signed part %+v, want {text: \"\", thoughtSignature: the recorded one}", p)
	}
}

// Defect 1 (function call): the recorded Gemini 3 tool loop. The second
// request the real API accepted carries the model turn as one functionCall
// part with its thoughtSignature on it (the empty unsigned text part that
// ended the stream is not sent back); corvid's must match it part for
// part, with the same signature bytes.
func TestGemini3ToolLoopSendsSignatureOnTheFunctionCall(t *testing.T) {
	t.Parallel()
	cas := replay.Cassette(t, replay.Read(t, "test_google_streaming_tool_call_thought_signature.yaml"))
	r := start(t, "gemini-3-pro-preview", replay.Responses(cas)...)
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "What is the capital of the user country? Call the tool", "end_turn")
	ups := r.Updates(sid)
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != "The capital of Mexico is Mexico City." {
		t.Errorf("text %q", got)
	}
	if calls := testkit.OfKind(ups, "tool_call"); len(calls) != 1 || calls[0].Title == "" {
		t.Errorf("tool_call updates: %+v", calls)
	}
	reqs := r.Server.MustRequests(t, 2)
	got, want := decode(t, reqs[1].Body), decode(t, cas[1].RequestBody)
	if m := want.Contents[1]; m.Role != "model" || len(m.Parts) != 1 || m.Parts[0].FunctionCall == nil || m.Parts[0].ThoughtSignature == "" {
		t.Fatalf("accepted model turn %+v: want one signed functionCall part", m)
	}
	compareContents(t, got.Contents, want.Contents)
}

// compareContents checks corvid's contents against the ones the real API
// accepted: same turns, roles, part kinds, function names and arguments,
// and the same signature bytes on the same parts. Ids are the client's
// own (the API sent none) and tool results are corvid's, so those are not
// compared.
func compareContents(t *testing.T, got, want []content) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d contents, the accepted request had %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Role != w.Role || len(g.Parts) != len(w.Parts) {
			t.Errorf("contents[%d]: role %q with %d parts, accepted %q with %d parts", i, g.Role, len(g.Parts), w.Role, len(w.Parts))
			continue
		}
		for j := range w.Parts {
			gp, wp := g.Parts[j], w.Parts[j]
			if (gp.FunctionCall == nil) != (wp.FunctionCall == nil) || (gp.FunctionResponse == nil) != (wp.FunctionResponse == nil) || gp.Thought != wp.Thought {
				t.Errorf("contents[%d].parts[%d] is %+v, accepted %+v", i, j, gp, wp)
				continue
			}
			if wp.FunctionCall != nil {
				if gp.FunctionCall.Name != wp.FunctionCall.Name || !jsonEqual(gp.FunctionCall.Args, wp.FunctionCall.Args) {
					t.Errorf("contents[%d].parts[%d].functionCall %s(%s), accepted %s(%s)", i, j, gp.FunctionCall.Name, gp.FunctionCall.Args, wp.FunctionCall.Name, wp.FunctionCall.Args)
				}
			}
			if wp.FunctionResponse != nil {
				var gn, wn struct{ Name string }
				_ = json.Unmarshal(gp.FunctionResponse, &gn)
				_ = json.Unmarshal(wp.FunctionResponse, &wn)
				if gn.Name != wn.Name {
					t.Errorf("contents[%d].parts[%d].functionResponse name %q, accepted %q", i, j, gn.Name, wn.Name)
				}
			}
			if wp.Text != nil && w.Role == "model" && (gp.Text == nil || *gp.Text != *wp.Text) {
				t.Errorf("contents[%d].parts[%d].text %v, accepted %q", i, j, gp.Text, *wp.Text)
			}
			switch {
			case wp.ThoughtSignature == skipSignature && gp.ThoughtSignature != "" && gp.ThoughtSignature != skipSignature:
				t.Errorf("contents[%d].parts[%d] carries thoughtSignature %q; the API sent none for it", i, j, gp.ThoughtSignature)
			case wp.ThoughtSignature == skipSignature:
				// The recorded response had no signature on this part; the
				// client sent Google's documented stand-in. Sending none
				// is what the response gave to send back.
			case wp.ThoughtSignature == "" && gp.ThoughtSignature != "":
				t.Errorf("contents[%d].parts[%d] carries a thoughtSignature the accepted request did not", i, j)
			case wp.ThoughtSignature != "" && (gp.ThoughtSignature == "" || !bytes.Equal(sigBytes(t, gp.ThoughtSignature), sigBytes(t, wp.ThoughtSignature))):
				t.Errorf("contents[%d].parts[%d] thoughtSignature %q, accepted %q (same bytes required)", i, j, gp.ThoughtSignature, wp.ThoughtSignature)
			}
		}
	}
}

// skipSignature is base64("skip_thought_signature_validator"), the
// stand-in Google documents for a functionCall that came without a
// thoughtSignature; pydantic-ai sends it where the API sent none.
const skipSignature = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if len(a) == 0 {
		a = json.RawMessage("{}")
	}
	if len(b) == 0 {
		b = json.RawMessage("{}")
	}
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// A recorded tool loop of three requests (two function calls, then the
// answer): each follow-up matches the one the real API accepted (turns,
// roles, parts, calls with their arguments, results by name). The calls
// came unsigned (gemini-2.0-flash), so no signature is due back.
func TestToolLoopOfThreeRequestsMatchesTheAcceptedRequests(t *testing.T) {
	t.Parallel()
	cas := replay.Cassette(t, replay.Read(t, "test_google_model_iter_stream.yaml"))
	r := start(t, "gemini-2.0-flash", replay.Responses(cas)...)
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "What is the temperature of the capital of France?", "end_turn")
	if got := testkit.TextOf(r.Updates(sid), "agent_message_chunk"); got != "The temperature in Paris is 30°C." {
		t.Errorf("text %q", got)
	}
	reqs := r.Server.MustRequests(t, 3)
	for i := 1; i < 3; i++ {
		got, want := decode(t, reqs[i].Body), decode(t, cas[i].RequestBody)
		if len(want.Contents) != 2*i+1 {
			t.Fatalf("accepted request %d has %d contents", i+1, len(want.Contents))
		}
		compareContents(t, got.Contents, want.Contents)
	}
}

// Gemini 2.5 streams thought summaries as parts marked thought: true;
// they reach the editor as agent_thought_chunk, and the answer (whose first
// part carries a thoughtSignature) as agent_message_chunk, each exactly as
// recorded and apart from the other.
func TestThoughtsStreamAsThoughtChunks(t *testing.T) {
	t.Parallel()
	cas := replay.Cassette(t, replay.Read(t, "test_google_model_thinking_part_iter.yaml"))
	rec := readChunks(t, sseData(cas[0].Response.Body))
	if !strings.Contains(rec.thoughts, "I've homed in on the user's need") || !strings.HasPrefix(rec.text, "Here is a step-by-step guide") || len(rec.textSigs) != 1 {
		t.Fatalf("recording: thoughts %q, text %q, %d signed text parts", rec.thoughts, rec.text, len(rec.textSigs))
	}
	r := start(t, "gemini-2.5-pro", replay.Responses(cas)...)
	sid := r.Ready(t)
	r.SetOption(t, sid, "thought_level", "medium")
	r.MustPrompt(t, sid, "How do I cross the street?", "end_turn")
	ups := r.Updates(sid)
	if got := testkit.TextOf(ups, "agent_thought_chunk"); got != rec.thoughts {
		t.Errorf("thoughts %q, recorded %q", got, rec.thoughts)
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != rec.text {
		t.Errorf("answer %q, recorded %q", got, rec.text)
	}
	b := decode(t, r.Server.Requests()[0].Body)
	if b.GenerationConfig == nil || b.GenerationConfig.ThinkingConfig["includeThoughts"] != true {
		t.Errorf("generationConfig %+v, want includeThoughts", b.GenerationConfig)
	}
}

// sseData is the data lines of a recorded event stream, one per line.
func sseData(body []byte) []byte {
	var out []byte
	for line := range bytes.Lines(body) {
		if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			out = append(append(out, bytes.TrimSpace(d)...), '\n')
		}
	}
	return out
}

// Defect 9: Gemini 3 takes thinkingLevel; thinkingBudget is the Gemini
// 2.5 control.
func TestGemini3GetsThinkingLevel(t *testing.T) {
	t.Parallel()
	r := start(t, "gemini-3-pro-preview", chunks(t, "google-reasoning-gemini3.chunks.txt"))
	sid := r.Ready(t)
	r.SetOption(t, sid, "thought_level", "high")
	r.MustPrompt(t, sid, "How many r's are in strawberry?", "end_turn")
	b := decode(t, r.Server.Requests()[0].Body)
	if b.GenerationConfig == nil {
		t.Fatal("no generationConfig")
	}
	tc := b.GenerationConfig.ThinkingConfig
	if _, ok := tc["thinkingBudget"]; ok || tc["thinkingLevel"] != "high" {
		t.Errorf("thinkingConfig %v, want thinkingLevel high and no thinkingBudget", tc)
	}
}

// rateLimited is a 429 body built from Google's documented error shape (no
// recording): a google.rpc.Status as JSON, status RESOURCE_EXHAUSTED, with
// a google.rpc.RetryInfo detail whose retryDelay is a protobuf Duration in
// its JSON form (seconds with an "s" suffix).
const rateLimited = `{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.4s"}]}}`

// Defect 8: a 429 whose body carries RetryInfo.retryDelay (here "34.4s")
// is retried after that delay, not after the default backoff of about a
// second. The retry is logged with its delay at debug level; the test
// reads that, checks nothing was sent early, and cancels.
func TestRateLimitHonoursRetryInfoDelay(t *testing.T) {
	t.Parallel()
	s := replay.New(t, replay.JSONError(429, []byte(rateLimited)), chunks(t, "google-text.chunks.txt"))
	r := replay.StartArgs(t, s, "GEMINI_BASE_URL", []string{"acp", "--log-level", "debug", "-m", "gemini:gemini-2.5-flash"})
	sid := r.Ready(t)
	p := r.CallAsync("session/prompt", testkit.TextPrompt(sid, "hello"))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(r.Stderr(), "retrying") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	logs := r.Stderr()
	if !strings.Contains(logs, "delay=34.4s") {
		t.Errorf("no retry with delay=34.4s logged:\n%s", logs)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests before the recorded retry delay passed, want 1", n)
	}
	r.Cancel(sid)
	raw, rerr := p.Wait(r.Ctx)
	if rerr != nil || !strings.Contains(string(raw), "cancelled") {
		t.Errorf("prompt after cancel: %s %v", raw, rerr)
	}
}

// An error chunk inside a 200 stream, after text was streamed: the
// recorded text stream cut after its first chunk, then an error object in
// Google's documented error shape. The text shown so far stays, the
// prompt ends with one sentence naming the error, nothing is retried, and
// the session goes on.
func TestErrorChunkInsideTheStreamEndsThePrompt(t *testing.T) {
	t.Parallel()
	const internal = "data: {\"error\": {\"code\": 500, \"message\": \"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting\", \"status\": \"INTERNAL\"}}\n\n"
	rec := readChunks(t, replay.Read(t, "google-text.chunks.txt"))
	cut := replay.CutAfter(chunks(t, "google-text.chunks.txt"), 1, internal)
	r := start(t, "gemini-3-pro-preview", cut, chunks(t, "google-text.chunks.txt"))
	sid := r.Ready(t)
	_, rerr := r.Prompt(r.Ctx, sid, "How many r's are in strawberry?")
	if rerr == nil || rerr.Code != -32603 || !strings.Contains(rerr.Message, "INTERNAL") {
		t.Fatalf("prompt error %v, want -32603 naming INTERNAL", rerr)
	}
	if got := testkit.TextOf(r.Updates(sid), "agent_message_chunk"); got == "" || !strings.HasPrefix(rec.text, got) || got == rec.text {
		t.Errorf("text before the error %q, want the start of the recorded text", got)
	}
	if n := len(r.Server.Requests()); n != 1 {
		t.Errorf("%d requests: a failure after streamed output must not be retried", n)
	}
	r.MustPrompt(t, sid, "Again", "end_turn")
}
