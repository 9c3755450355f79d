package gemini

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// A real Gemini 3 tool loop (charmbracelet/fantasy's cassette, see
// ../SOURCES.md): gemini-3-pro-preview (answered as gemini-3.1-pro-preview)
// calls weather with the id "9d532gc9" and a thoughtSignature on the call;
// the cassette's second request is the follow-up the real API accepted:
// the model turn with that functionCall (id and signature as received),
// then a functionResponse carrying the same id. corvid's follow-up must
// have that layout, the call's id echoed on both parts and the signature
// bytes unchanged (Google: a Gemini 3 function call whose signature does
// not come back is refused). The answer ends with a signed empty text
// part; on the next prompt the whole history goes back with every
// signature where it came (Google's rule across turns: send the
// conversation back as received).
func TestGemini3FunctionResponseEchoesTheCallIDAndSignatureAsAccepted(t *testing.T) {
	t.Parallel()
	cas := replay.GoVCR(t, replay.Read(t, "fantasy-gemini-3-pro-preview-thinking-streaming.yaml"))
	if len(cas) != 2 {
		t.Fatalf("cassette has %d interactions, want 2", len(cas))
	}
	rec, _ := streamParts(t, cas[0].Response.Body)
	if len(rec) == 0 || rec[0].FunctionCall == nil || rec[0].FunctionCall.ID == "" || rec[0].ThoughtSignature == "" {
		t.Fatalf("recorded response: %+v; this test needs a signed functionCall with an id", rec)
	}
	call := rec[0]
	answerParts, answer := streamParts(t, cas[1].Response.Body)
	var answerSig string
	for _, p := range answerParts {
		if p.ThoughtSignature != "" {
			answerSig = p.ThoughtSignature
		}
	}
	acc := decode(t, cas[1].RequestBody)
	if len(acc.Contents) != 3 || acc.Contents[1].Parts[0].FunctionCall == nil || acc.Contents[2].Parts[0].FunctionResponse == nil {
		t.Fatalf("accepted follow-up is not user, model (call), user (response): %s", cas[1].RequestBody)
	}
	var accResp struct{ ID, Name string }
	if err := json.Unmarshal(acc.Contents[2].Parts[0].FunctionResponse, &accResp); err != nil || accResp.ID != call.FunctionCall.ID {
		t.Fatalf("the accepted functionResponse %s does not carry the call's id %q", acc.Contents[2].Parts[0].FunctionResponse, call.FunctionCall.ID)
	}

	r := start(t, "gemini-3-pro-preview", append(replay.Responses(cas), chunks(t, "google-text.chunks.txt"))...)
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "What's the weather in Florence, Italy?", "end_turn")
	if got := testkit.TextOf(r.Updates(sid), "agent_message_chunk"); got != answer {
		t.Errorf("message text %q, want the recorded %q", got, answer)
	}

	reqs := r.Server.MustRequests(t, 2)
	b := decode(t, reqs[1].Body)
	if len(b.Contents) != 3 || b.Contents[0].Role != "user" || b.Contents[1].Role != "model" || b.Contents[2].Role != "user" {
		t.Fatalf("follow-up is not user, model, user as accepted:\n%s", reqs[1].Body)
	}
	checkSignedCall(t, "follow-up", b.Contents[1], call)
	var resps []struct{ ID, Name string }
	for _, p := range b.Contents[2].Parts {
		var fr struct{ ID, Name string }
		if p.FunctionResponse == nil || json.Unmarshal(p.FunctionResponse, &fr) != nil {
			t.Fatalf("user turn part %+v is not a functionResponse:\n%s", p, reqs[1].Body)
		}
		resps = append(resps, fr)
	}
	if len(resps) != 1 || resps[0].ID != accResp.ID || resps[0].Name != accResp.Name {
		t.Errorf("functionResponse %+v, the accepted one {ID:%s Name:%s}", resps, accResp.ID, accResp.Name)
	}

	// Next turn: the history goes back as received, signatures included.
	r.MustPrompt(t, sid, "And tomorrow?", "end_turn")
	third := decode(t, r.Server.MustRequests(t, 3)[2].Body)
	if len(third.Contents) != 5 {
		t.Fatalf("next turn's request has %d contents, want 5 (user, model, user, model, user)", len(third.Contents))
	}
	checkSignedCall(t, "next turn", third.Contents[1], call)
	if answerSig != "" {
		found := false
		for _, p := range third.Contents[3].Parts {
			found = found || (p.ThoughtSignature != "" && bytes.Equal(sigBytes(t, p.ThoughtSignature), sigBytes(t, answerSig)))
		}
		if !found {
			t.Errorf("next turn: the answer's signature did not come back on its model turn: %+v", third.Contents[3].Parts)
		}
	}
}

// checkSignedCall asserts a model turn holds the recorded functionCall
// with its id, arguments and signature bytes, and no other signed part.
func checkSignedCall(t *testing.T, where string, c content, rec part) {
	t.Helper()
	var calls []part
	for _, p := range c.Parts {
		if p.FunctionCall != nil {
			calls = append(calls, p)
		} else if p.ThoughtSignature != "" {
			t.Errorf("%s: model turn part %+v carries a signature; the recording signed only the call", where, p)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("%s: model turn has %d functionCall parts, want 1: %+v", where, len(calls), c.Parts)
	}
	got := calls[0]
	if got.FunctionCall.ID != rec.FunctionCall.ID || got.FunctionCall.Name != rec.FunctionCall.Name || !jsonEqual(got.FunctionCall.Args, rec.FunctionCall.Args) {
		t.Errorf("%s: functionCall %s %s(%s), recorded %s %s(%s)", where, got.FunctionCall.ID, got.FunctionCall.Name, got.FunctionCall.Args, rec.FunctionCall.ID, rec.FunctionCall.Name, rec.FunctionCall.Args)
	}
	if got.ThoughtSignature == "" || !bytes.Equal(sigBytes(t, got.ThoughtSignature), sigBytes(t, rec.ThoughtSignature)) {
		t.Errorf("%s: functionCall signature %.40q…, want the recorded bytes", where, got.ThoughtSignature)
	}
}
