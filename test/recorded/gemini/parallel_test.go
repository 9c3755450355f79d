package gemini

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/test/recorded/replay"
)

// streamParts returns the parts of every candidate of a recorded event
// stream, in order, and the text they carry.
func streamParts(t *testing.T, body []byte) (parts []part, text string) {
	t.Helper()
	for line := range bytes.Lines(body) {
		d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if !ok {
			continue
		}
		var chunk struct {
			Candidates []struct {
				Content content `json:"content"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal(d, &chunk); err != nil {
			t.Fatalf("recorded chunk %s: %v", d, err)
		}
		for _, c := range chunk.Candidates {
			for _, p := range c.Content.Parts {
				parts = append(parts, p)
				if p.Text != nil {
					text += *p.Text
				}
			}
		}
	}
	return parts, text
}

// A real parallel function call (charmbracelet/fantasy's go-vcr cassette,
// see ../SOURCES.md): gemini-2.5-flash answers with two functionCall parts
// in one chunk, add (carrying a thoughtSignature) and multiply (none); the
// cassette's second request is the follow-up the real API accepted: one
// model turn with both calls, then one user turn with a functionResponse
// for each, in the same order. corvid has neither tool, so both responses
// report an error; the layout must be the accepted one, and the signature
// must stay on the part it came on (Google's documented rule).
func TestParallelFunctionCallsGoBackInOneTurnWithAResponseEach(t *testing.T) {
	t.Parallel()
	cas := replay.GoVCR(t, replay.Read(t, "fantasy-gemini-2.5-flash-multi_tool_streaming.yaml"))
	if len(cas) != 2 {
		t.Fatalf("cassette has %d interactions, want 2", len(cas))
	}
	rec, _ := streamParts(t, cas[0].Response.Body)
	if len(rec) != 2 || rec[0].FunctionCall == nil || rec[1].FunctionCall == nil || rec[0].ThoughtSignature == "" || rec[1].ThoughtSignature != "" {
		t.Fatalf("recorded response: %+v; this test needs a signed and an unsigned functionCall", rec)
	}
	_, answer := streamParts(t, cas[1].Response.Body)
	acc := decode(t, cas[1].RequestBody)
	if len(acc.Contents) != 3 || len(acc.Contents[1].Parts) != 2 || len(acc.Contents[2].Parts) != 2 {
		t.Fatalf("accepted follow-up is not user, model (2 calls), user (2 responses): %s", cas[1].RequestBody)
	}

	r := start(t, "gemini-2.5-flash", replay.Responses(cas)...)
	sid := r.Ready(t)
	r.MustPrompt(t, sid, "Add and multiply the number 2 and 3", "end_turn")
	ups := r.Updates(sid)

	calls := testkit.OfKind(ups, "tool_call")
	if len(calls) != len(rec) {
		t.Fatalf("%d tool_call updates, want %d (one per recorded functionCall)", len(calls), len(rec))
	}
	if calls[0].ToolCallID == calls[1].ToolCallID {
		t.Errorf("both tool calls have id %q", calls[0].ToolCallID)
	}
	for i, p := range rec {
		if calls[i].Title != p.FunctionCall.Name || !jsonEqual(calls[i].RawInput, p.FunctionCall.Args) {
			t.Errorf("tool_call %d is %s(%s), recorded %s(%s)", i, calls[i].Title, calls[i].RawInput, p.FunctionCall.Name, p.FunctionCall.Args)
		}
		if !finished(ups, calls[i].ToolCallID) {
			t.Errorf("tool call %s never finished: corvid did not run it", p.FunctionCall.Name)
		}
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != answer {
		t.Errorf("message text %q, want the recorded %q", got, answer)
	}

	reqs := r.Server.MustRequests(t, 2)
	b := decode(t, reqs[1].Body)
	if len(b.Contents) != len(acc.Contents) {
		t.Fatalf("follow-up has %d contents, the accepted one %d:\n%s", len(b.Contents), len(acc.Contents), reqs[1].Body)
	}
	for i, c := range acc.Contents {
		if b.Contents[i].Role != c.Role {
			t.Fatalf("follow-up content %d has role %q, accepted %q:\n%s", i, b.Contents[i].Role, c.Role, reqs[1].Body)
		}
	}
	var sent []part
	for _, p := range b.Contents[1].Parts {
		if p.FunctionCall != nil {
			sent = append(sent, p)
		} else if p.ThoughtSignature != "" {
			t.Errorf("model turn part %+v carries a signature; the recording signed only the add call", p)
		}
	}
	if len(sent) != len(rec) {
		t.Fatalf("model turn has %d functionCall parts, want %d:\n%s", len(sent), len(rec), reqs[1].Body)
	}
	for i, p := range rec {
		s := sent[i]
		if s.FunctionCall.Name != p.FunctionCall.Name || !jsonEqual(s.FunctionCall.Args, p.FunctionCall.Args) {
			t.Errorf("functionCall %d is %s(%s), recorded %s(%s)", i, s.FunctionCall.Name, s.FunctionCall.Args, p.FunctionCall.Name, p.FunctionCall.Args)
		}
		if p.ThoughtSignature == "" && s.ThoughtSignature != "" {
			t.Errorf("functionCall %d carries a signature the recording did not give it", i)
		}
		if p.ThoughtSignature != "" && (s.ThoughtSignature == "" || !bytes.Equal(sigBytes(t, s.ThoughtSignature), sigBytes(t, p.ThoughtSignature))) {
			t.Errorf("functionCall %d signature %.40q…, want the recorded bytes", i, s.ThoughtSignature)
		}
	}
	var resp []struct{ ID, Name string }
	for _, p := range b.Contents[2].Parts {
		if p.FunctionResponse == nil {
			t.Errorf("user turn holds a part that is not a functionResponse: %+v", p)
			continue
		}
		var fr struct{ ID, Name string }
		if err := json.Unmarshal(p.FunctionResponse, &fr); err != nil {
			t.Fatal(err)
		}
		resp = append(resp, fr)
	}
	if len(resp) != len(acc.Contents[2].Parts) {
		t.Fatalf("user turn has %d functionResponse parts, accepted %d:\n%s", len(resp), len(acc.Contents[2].Parts), reqs[1].Body)
	}
	for i, p := range acc.Contents[2].Parts {
		var want struct{ Name string }
		if err := json.Unmarshal(p.FunctionResponse, &want); err != nil {
			t.Fatal(err)
		}
		if resp[i].Name != want.Name {
			t.Errorf("functionResponse %d is for %q, the accepted one for %q", i, resp[i].Name, want.Name)
		}
		if resp[i].ID != sent[i].FunctionCall.ID {
			t.Errorf("functionResponse %d id %q, its functionCall's id %q", i, resp[i].ID, sent[i].FunctionCall.ID)
		}
	}
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
