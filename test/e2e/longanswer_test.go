package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corvidstore "github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// A long answer is stored once: its streamed chunks, and a record of the
// model context that points into them instead of holding its text again
// (issue 36: a 10 MB answer was written twice, the second time after its
// last chunk was shown, which held up the prompt's answer). corvid killed
// with SIGKILL right after the turn's answer, a new process loads the
// session and sends the model every text of the answer exactly.
func TestLongAnswerIsStoredOnceAndReachesTheModelAfterAKill(t *testing.T) {
	api := fakeanthropic.New(t)
	st := newSharedHome(t, nil)
	first := strings.Repeat("line \"one\"\tü\\\n", 20000)
	second := strings.Repeat("<b>two</b> é\n", 15000)
	api.Enqueue(fakeanthropic.Response{ChunkSize: 4096, Blocks: []fakeanthropic.Block{
		fakeanthropic.Text(first), fakeanthropic.Text("short, between"), fakeanthropic.Text(second),
	}})
	env := []string{"ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off"}
	args := []string{"acp", "-m", "anthropic:claude-sonnet-4-6"}

	a := st.startArgs(t, testkit.Minimal(), env, args...)
	sid := a.NewSession(a.ctx, st.workspace)
	shown := testkit.TextOf(a.turn(t, sid, "Write a lot.", "end_turn"), "agent_message_chunk")
	a.Kill()
	answer := first + "short, between" + second
	if shown != answer {
		t.Fatalf("the client was shown %d bytes of the %d-byte answer", len(shown), len(answer))
	}

	escaped, _ := json.Marshal(answer)
	if stored := storedPayloadBytes(t, st.dbPath(), sid); stored > len(escaped)*3/2 {
		t.Errorf("the session's rows hold %d bytes for an answer of %d (JSON-escaped): it is stored twice", stored, len(escaped))
	}

	b := st.startArgs(t, testkit.Minimal(), env, args...)
	b.load(t, sid)
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("Done.")}})
	b.turn(t, sid, "Again?", "end_turn")
	reqs := api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the fake API got %d requests, want 2", len(reqs))
	}
	var texts []string
	for _, m := range reqs[1].Body.Messages {
		for _, c := range m.Content {
			if m.Role == "assistant" && c.Type == "text" {
				texts = append(texts, c.Text)
			}
		}
	}
	if len(texts) != 3 || texts[0] != first || texts[1] != "short, between" || texts[2] != second {
		lens := make([]int, len(texts))
		for i, s := range texts {
			lens[i] = len(s)
		}
		t.Errorf("after the kill and a load the model got assistant texts of %v bytes, want [%d 14 %d] exactly",
			lens, len(first), len(second))
	}
}

// storedPayloadBytes sums the payloads of a session's stored events.
func storedPayloadBytes(t *testing.T, db, sid string) int {
	t.Helper()
	s, err := corvidstore.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	err = s.ScanEvents(context.Background(), sid, func(ev corvidstore.Event) error {
		n += len(ev.Payload)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
