package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// A streamed answer's text is escaped once, by the agent, for the
// chunk's stored row, and its frame copies those bytes: each
// agent_message_chunk frame still carries its text exactly as
// json.Marshal writes it (<, > and & escaped, U+2028 too), the frames
// add up to the answer, and a session/load in a second process replays
// the same text from the rows.
func TestStreamedChunkFramesCarryTheTextAsJSONMarshalWritesIt(t *testing.T) {
	answer := strings.Repeat("if a < b && c > d { \"quoted\" \\ back\tslash }\nhéllo ✓ 日本語 \u2028 sep \x01 ctl\n", 40)
	home, ws := t.TempDir(), t.TempDir()
	opts := testkit.Options{Dir: ws, Env: []string{"CORVID_HOME=" + home}}
	s := startCorvid(t, text(answer, 37), opts)
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	var got strings.Builder
	frames := 0
	for _, l := range s.Transcript() {
		if l.Dir != testkit.FromAgent || !strings.Contains(l.Text, `"sessionUpdate":"agent_message_chunk"`) {
			continue
		}
		var m struct {
			Params struct {
				Update struct {
					Content struct{ Text string }
				}
			}
		}
		if err := json.Unmarshal([]byte(l.Text), &m); err != nil {
			t.Fatalf("%v: %s", err, l.Text)
		}
		text := m.Params.Update.Content.Text
		want, _ := json.Marshal(text)
		if !strings.Contains(l.Text, `"content":{"type":"text","text":`+string(want)+`}`) {
			t.Errorf("a chunk's text is not written as json.Marshal writes it (%s):\n%s", want, l.Text)
		}
		got.WriteString(text)
		frames++
	}
	if got.String() != answer || frames < 10 {
		t.Fatalf("%d frames carried %q, want %q", frames, got.String(), answer)
	}
	if code, _ := s.Close(); code != 0 {
		t.Fatalf("exit %d\n%s", code, s.Stderr())
	}

	s2 := startCorvid(t, text("ok", 0), opts)
	if _, rerr := s2.Initialize(s2.ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	s2.MustCall(s2.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}, nil)
	if replayed := testkit.TextOf(s2.Updates(sid), "agent_message_chunk"); replayed != answer {
		t.Errorf("session/load replays %q, want %q", replayed, answer)
	}
	// The replay copies the stored bytes too: they are json.Marshal's.
	for _, l := range s2.Transcript() {
		if l.Dir == testkit.FromAgent && strings.Contains(l.Text, `"agent_message_chunk"`) && !bytes.Contains([]byte(l.Text), []byte(`\u003c b \u0026\u0026`)) {
			t.Errorf("a replayed chunk does not escape < and & as json.Marshal does:\n%s", l.Text)
		}
	}
}
