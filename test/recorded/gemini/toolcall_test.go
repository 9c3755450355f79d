package gemini

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// Defect 1 (function call), against the documented rule: the recorded
// Gemini 3 stream calls weather(location: San Francisco) with a
// thoughtSignature on the functionCall part (then an empty, unsigned text
// part). Google's documentation says to send every signature back on the
// part it came on; corvid's follow-up carries the model turn with that
// functionCall, its arguments and the same signature bytes, no signature
// on any other part, then a functionResponse for weather. (No accepted
// follow-up is recorded here; TestGemini3ToolLoopSendsSignatureOnTheFunctionCall
// checks one against pydantic-ai's cassette.)
func TestGemini3FunctionCallSignatureGoesBackOnTheCall(t *testing.T) {
	t.Parallel()
	raw := replay.Read(t, "google-tool-call-gemini3.chunks.txt")
	var first struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					FunctionCall     *functionCall `json:"functionCall"`
					ThoughtSignature string        `json:"thoughtSignature"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	if err := json.Unmarshal(line, &first); err != nil || len(first.Candidates) != 1 || len(first.Candidates[0].Content.Parts) != 1 {
		t.Fatalf("recording's first chunk: %v %+v", err, first)
	}
	rec := first.Candidates[0].Content.Parts[0]
	if rec.FunctionCall == nil || rec.FunctionCall.Name != "weather" || rec.ThoughtSignature == "" {
		t.Fatalf("recording's first part: %+v", rec)
	}

	r := start(t, "gemini-3-pro-preview", chunks(t, "google-tool-call-gemini3.chunks.txt"), chunks(t, "google-text.chunks.txt"))
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "What is the weather in San Francisco?", "end_turn")
	if calls := testkit.OfKind(r.Updates(sid), "tool_call"); len(calls) != 1 {
		t.Errorf("%d tool_call updates, want 1", len(calls))
	}
	reqs := r.Server.MustRequests(t, 2)
	b := decode(t, reqs[1].Body)
	if len(b.Contents) != 3 || b.Contents[0].Role != "user" || b.Contents[1].Role != "model" || b.Contents[2].Role != "user" {
		t.Fatalf("follow-up contents, want user, model, user:\n%s", reqs[1].Body)
	}
	var calls []part
	for _, p := range b.Contents[1].Parts {
		switch {
		case p.FunctionCall != nil:
			calls = append(calls, p)
		case p.ThoughtSignature != "":
			t.Errorf("model turn part %+v carries a signature; the recording signed only the functionCall", p)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("%d functionCall parts in the model turn, want 1:\n%s", len(calls), reqs[1].Body)
	}
	c := calls[0]
	if c.FunctionCall.Name != "weather" || !jsonEqual(c.FunctionCall.Args, rec.FunctionCall.Args) {
		t.Errorf("functionCall %s(%s), recorded %s(%s)", c.FunctionCall.Name, c.FunctionCall.Args, rec.FunctionCall.Name, rec.FunctionCall.Args)
	}
	if c.ThoughtSignature == "" || !bytes.Equal(sigBytes(t, c.ThoughtSignature), sigBytes(t, rec.ThoughtSignature)) {
		t.Errorf("functionCall part signature %.40q…, want the recorded bytes (%d chars)", c.ThoughtSignature, len(rec.ThoughtSignature))
	}
	var responses int
	for _, p := range b.Contents[2].Parts {
		var fr struct{ Name string }
		if p.FunctionResponse != nil && json.Unmarshal(p.FunctionResponse, &fr) == nil && fr.Name == "weather" {
			responses++
		}
	}
	if responses != 1 {
		t.Errorf("%d functionResponse parts for weather, want 1:\n%s", responses, reqs[1].Body)
	}
}
