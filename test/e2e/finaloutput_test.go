package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	fa "github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// finalMeta decodes an update's _meta["corvid.dev/finalOutput"]; ok is false without it.
func finalMeta(u testkit.Update) (format string, ok bool) {
	var raw struct {
		Meta map[string]struct {
			Format string `json:"format"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(u.Raw, &raw)
	m, ok := raw.Meta["corvid.dev/finalOutput"]
	return m.Format, ok
}

func submitCall(id, output string) fa.Block {
	in, _ := json.Marshal(map[string]string{"output": output})
	return fa.ToolUse(id, "submit_output", string(in))
}

// finalText is what a final output's chunk shows: Leviath's document has "one more
// chunk at the end, holding the answer and its format label", set apart from the
// streamed output, so hosts that ignore _meta (Zed, Gas City) show the label too.
func finalText(format, answer string) string {
	return "\n\n--- final output (" + format + ") ---\n" + answer
}

// With --output-format, the model gets submit_output (label and instructions in its
// description); what it submits arrives after the streamed text as one more message
// marked _meta corvid.dev/finalOutput, its text set apart by the format label; it is
// stored and replayed on load the same way.
func TestFinalOutputIsSentLastAsItsOwnMarkedMessage(t *testing.T) {
	api := fa.New(t)
	home := t.TempDir()
	ws := t.TempDir()
	const final = "# Summary\n\nAll good."
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.Text("Working on it. "), submitCall("toolu_s1", final)}},
		fa.Response{Blocks: []fa.Block{fa.Text("Submitted.")}},
	)
	s := startOnAPI(t, api, "claude-haiku-4-5", ws, home, "--output-format", "markdown", "--output-instructions", "Use headings.")
	sid := s.NewSession(s.ctx, ws)
	ups := s.turn(t, sid, "summarise", "end_turn")

	var tool *fa.Tool
	for i, tl := range api.Requests()[0].Body.Tools {
		if tl.Name == "submit_output" {
			tool = &api.Requests()[0].Body.Tools[i]
		}
	}
	if tool == nil || !strings.Contains(tool.Description, `"markdown"`) || !strings.Contains(tool.Description, "Use headings.") {
		t.Fatalf("submit_output tool %+v, want one naming the label and the instructions", tool)
	}

	chunks := testkit.OfKind(ups, "agent_message_chunk")
	if len(chunks) == 0 {
		t.Fatal("no message chunks")
	}
	last := chunks[len(chunks)-1]
	format, ok := finalMeta(last)
	if !ok || format != "markdown" || last.Content.Text != finalText("markdown", final) {
		t.Fatalf("last chunk %s, want the final output labelled and marked with format markdown", last.Raw)
	}
	for _, c := range chunks[:len(chunks)-1] {
		if c.MessageID == last.MessageID {
			t.Errorf("the final output shares messageId %s with streamed text", c.MessageID)
		}
		if _, ok := finalMeta(c); ok {
			t.Errorf("a streamed chunk carries the final-output mark: %s", c.Raw)
		}
	}
	s.Close()

	// Stored and replayed on load, by another corvid on the same store.
	s2 := startOnAPI(t, api, "claude-haiku-4-5", ws, home)
	replay := s2.load(t, sid)
	found := false
	for _, u := range testkit.OfKind(replay, "agent_message_chunk") {
		if f, ok := finalMeta(u); ok && f == "markdown" && u.Content.Text == finalText("markdown", final) {
			found = true
		}
	}
	if !found {
		t.Errorf("the replay lacks the marked final output: %+v", replay)
	}
}

func TestTurnWithoutSubmissionAddsNothingAndLongOutputSplits(t *testing.T) {
	api := fa.New(t)
	ws := t.TempDir()
	long := strings.Repeat("0123456789abcdef", 5000) // 80000 bytes: two chunks
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.Text("no submission")}},
		fa.Response{Blocks: []fa.Block{submitCall("toolu_s2", long)}},
		fa.Response{Blocks: []fa.Block{fa.Text("done")}},
	)
	s := startOnAPI(t, api, "claude-haiku-4-5", ws, "", "--output-format", "text")
	sid := s.NewSession(s.ctx, ws)
	for _, u := range s.turn(t, sid, "first", "end_turn") {
		if _, ok := finalMeta(u); ok {
			t.Errorf("a turn that submitted nothing sent a final output: %s", u.Raw)
		}
	}
	var parts []testkit.Update
	for _, u := range s.turn(t, sid, "second", "end_turn") {
		if _, ok := finalMeta(u); ok {
			parts = append(parts, u)
		}
	}
	if len(parts) < 2 {
		t.Fatalf("%d final-output chunks for 80000 bytes, want it split", len(parts))
	}
	var b strings.Builder
	for _, p := range parts {
		if p.MessageID != parts[0].MessageID {
			t.Errorf("final output split across messages %s and %s", parts[0].MessageID, p.MessageID)
		}
		if len(p.Content.Text) > 64<<10 {
			t.Errorf("a chunk holds %d bytes, over 64 KiB", len(p.Content.Text))
		}
		b.WriteString(p.Content.Text)
	}
	if b.String() != finalText("text", long) {
		t.Error("the split final output does not join back to its label and what was submitted")
	}
}

func TestPrintModeShowsTheFinalOutputLast(t *testing.T) {
	script := scriptFile(t, "submit-output")
	p := newPrintEnv(t, script)
	out, errOut, code := p.run("", "run", "-p", "check", "-m", "script:"+p.script, "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "Looking.Done.\n\n--- final output (json) ---\n{\"ok\": true}\n"
	if out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	p2 := newPrintEnv(t, script)
	out, errOut, code = p2.run("", "run", "-p", "check", "-m", "script:"+p2.script, "--output-format", "json", "--format", "json")
	var r struct {
		Text        string `json:"text"`
		FinalOutput *struct {
			Format, Text string
		} `json:"finalOutput"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errOut)
	}
	if r.FinalOutput == nil || r.FinalOutput.Format != "json" || r.FinalOutput.Text != `{"ok": true}` || r.Text != "Looking.Done." {
		t.Errorf("json result %s", out)
	}
}
