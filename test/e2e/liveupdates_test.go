package e2e

// The schema's live updates (`notice`, `compaction_update`,
// `compaction_summary_chunk`) go only to clients that advertise
// `session.notices` / `session.compaction`; other clients keep what they got
// before (the testkit fails a test on any live update a client did not ask
// for).

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

type noticeFrame struct {
	Severity    string `json:"severity"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

func notices(t *testing.T, ups []testkit.Update) []noticeFrame {
	t.Helper()
	var out []noticeFrame
	for _, u := range testkit.OfKind(ups, "notice") {
		var n noticeFrame
		if err := json.Unmarshal(u.Raw, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// An MCP server that fails at the start is a warning notice for a client that
// shows notices, and a "[corvid] …" message for one that does not.
func TestStartNoticeIsANoticeOnlyWhereTheClientAdvertisesNotices(t *testing.T) {
	broken := map[string]any{"name": "broken", "command": "/nonexistent/mcp-server", "args": []string{}, "env": []any{}}
	for _, h := range []testkit.Host{testkit.Minimal(), testkit.LiveUpdates()} {
		t.Run(h.Name, func(t *testing.T) {
			s := startCorvid(t, text("fine", 0), testkit.Options{})
			if _, rerr := s.Initialize(s.ctx, h); rerr != nil {
				t.Fatal(rerr)
			}
			var res struct {
				SessionID string `json:"sessionId"`
			}
			s.MustCall(s.ctx, "session/new", map[string]any{"cwd": s.workspace, "mcpServers": []any{broken}}, &res)
			live := h.Name == "live-updates"
			want := "agent_message_chunk"
			if live {
				want = "notice"
			}
			if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
				return u.SessionUpdate == want && strings.Contains(string(u.Raw), "broken")
			}); err != nil {
				t.Fatalf("the failed server was not told as a %s: %v", want, err)
			}
			s.turn(t, res.SessionID, "hi", "end_turn")
			ups := s.Updates(res.SessionID)
			ns := notices(t, ups)
			msgs := testkit.TextOf(ups, "agent_message_chunk")
			if live {
				if len(ns) != 1 || ns[0].Severity != "warning" || !strings.Contains(ns[0].Title, "broken") {
					t.Errorf("notices %+v, want one warning naming the server", ns)
				}
				if strings.Contains(msgs, "[corvid]") {
					t.Errorf("a client that shows notices also got the notice as a message: %q", msgs)
				}
				return
			}
			if len(ns) != 0 || !strings.Contains(msgs, "[corvid]") || !strings.Contains(msgs, "broken") {
				t.Errorf("notices %+v, messages %q; want none, and a [corvid] message naming the server", ns, msgs)
			}
		})
	}
}

type compactionFrame struct {
	SessionUpdate string               `json:"sessionUpdate"`
	CompactionID  string               `json:"compactionId"`
	Status        string               `json:"status"`
	Content       testkit.ContentBlock `json:"content"`
}

// An automatic compaction (near-context-window: the third turn compacts; the
// summary request gets the script's "answer two") is followed live by a client
// that advertises session.compaction: in progress, the summary as it streams,
// completed. Both kinds of client keep the message that says so.
func TestCompactionProgressGoesOnlyToClientsThatAdvertiseIt(t *testing.T) {
	for _, h := range []testkit.Host{testkit.Minimal(), testkit.LiveUpdates()} {
		t.Run(h.Name, func(t *testing.T) {
			s := startCorvid(t, scriptFile(t, "near-context-window"), testkit.Options{})
			sid := s.ready(t, h)
			s.turn(t, sid, "question one", "end_turn")
			s.turn(t, sid, "question two", "end_turn")
			third := s.turn(t, sid, "question three", "end_turn")
			checkCompacted(t, third, 1720)
			var frames []compactionFrame
			for _, u := range third {
				if strings.HasPrefix(u.SessionUpdate, "compaction_") {
					var f compactionFrame
					if err := json.Unmarshal(u.Raw, &f); err != nil {
						t.Fatal(err)
					}
					frames = append(frames, f)
				}
			}
			if h.Name != "live-updates" {
				if len(frames) != 0 {
					t.Errorf("%d compaction updates to a client that did not advertise session.compaction", len(frames))
				}
				return
			}
			if len(frames) < 3 {
				t.Fatalf("compaction updates %+v, want in_progress, summary chunks, completed", frames)
			}
			first, last := frames[0], frames[len(frames)-1]
			if first.SessionUpdate != "compaction_update" || first.Status != "in_progress" || last.SessionUpdate != "compaction_update" || last.Status != "completed" {
				t.Errorf("first %+v, last %+v; want compaction_update in_progress … completed", first, last)
			}
			var summary strings.Builder
			for _, f := range frames {
				if f.CompactionID != first.CompactionID || f.CompactionID == "" {
					t.Errorf("compaction ids differ: %+v", frames)
				}
				if f.SessionUpdate == "compaction_summary_chunk" {
					summary.WriteString(f.Content.Text)
				}
			}
			if summary.String() != "answer two" {
				t.Errorf("summary chunks say %q, want the summary the model wrote, %q", summary.String(), "answer two")
			}
		})
	}
}
