package e2e

// Issue #29 item 13: the in-process shell was silent until its command
// finished. A client without the terminal capability now sees the output
// as it comes, in the tool call's content; only the final state is stored.

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// toolText is the text of an update's tool call content.
func toolText(u testkit.Update) string {
	var b strings.Builder
	for _, c := range u.ToolContent {
		b.WriteString(c.Content.Text)
	}
	return b.String()
}

func TestInProcessShellShowsOutputWhileTheCommandRuns(t *testing.T) {
	st := newSharedHome(t, toolScript("shell", map[string]any{"command": "for i in 1 2 3; do echo line$i; sleep 1; done"}))
	s := st.start(t, testkit.Minimal()) // no terminal capability: the shell runs in-process
	sid := s.NewSession(s.ctx, st.workspace)
	if stop, rerr := s.Prompt(s.ctx, sid, "run"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}

	// Live: an update shows line1 before the command printed line3 (2 s
	// later), so before it completed; the completed update has it all.
	var callID string
	live, completed := -1, -1
	for _, u := range s.Updates(sid) {
		switch {
		case u.SessionUpdate == "tool_call":
			callID = u.ToolCallID
		case u.SessionUpdate != "tool_call_update" || u.ToolCallID != callID:
		case u.Status == "completed":
			completed = u.Seq
			if text := toolText(u); !strings.Contains(text, "line1\nline2\nline3") {
				t.Errorf("the completed update holds %q, want all three lines", text)
			}
		case live < 0 && strings.Contains(toolText(u), "line1") && !strings.Contains(toolText(u), "line3"):
			live = u.Seq
		}
	}
	if live < 0 || completed < 0 || live > completed {
		t.Fatalf("no tool_call_update showed line1 while the command ran (live at line %d, completed at %d):\n%s", live, completed, s.TranscriptString())
	}

	// Stored: the call's final state only, not each live update (one
	// JSON line per stored event).
	s.Close()
	cmd := exec.Command(testkit.BuildCorvid(t), "sessions", "export", "--format", "jsonl", sid)
	cmd.Env = s.Env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sessions export: %v\n%s", err, out)
	}
	stored := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "tool_call_update") && strings.Contains(line, "line1") {
			stored++
		}
	}
	if stored != 1 {
		t.Errorf("%d stored events hold the command's output, want 1 (the final state):\n%s", stored, out)
	}

	// Replay: the final state; no update of the live output.
	r := st.start(t, testkit.Minimal())
	var withOutput []string
	for _, u := range r.load(t, sid) {
		if u.ToolCallID != callID || u.SessionUpdate != "tool_call_update" {
			continue
		}
		if text := toolText(u); strings.Contains(text, "line1") {
			withOutput = append(withOutput, text)
		}
	}
	if len(withOutput) != 1 || !strings.Contains(withOutput[0], "line3") {
		t.Errorf("the replay shows the output in %d updates %q, want once, complete: the live updates are not stored", len(withOutput), withOutput)
	}
}
