package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/corvid-agent/corvid/internal/acp"
)

func testModel() *model {
	m := newModel(Options{}, newTheme(true, false))
	m.width, m.height = 80, 24
	m.sessionID, m.ready = "s1", true
	return m
}

func (m *model) feed(t *testing.T, update any) {
	t.Helper()
	b, err := json.Marshal(update)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(updateMsg{sessionID: "s1", raw: b})
}

// printed takes the queued lines as the terminal would get them.
func (m *model) printed() []string {
	var out []string
	for _, l := range m.printQ {
		out = append(out, ansi.Strip(l))
	}
	m.printQ, m.printing = nil, 0
	return out
}

func chunk(kind, text string) acp.ContentChunk {
	return acp.ContentChunk{SessionUpdate: kind, Content: acp.TextBlock(text)}
}

// Each streamed line is queued for the scrollback once, when it is
// complete; the tail waits (and is drawn live) until the turn ends.
func TestStreamedLinesArePrintedOnce(t *testing.T) {
	m := testModel()
	var all []string
	text := ""
	for i := 1; i <= 50; i++ {
		text += fmt.Sprintf("line %02d\n", i)
	}
	text += "the tail"
	for len(text) > 0 {
		n := min(len(text), 7)
		m.feed(t, chunk("agent_message_chunk", text[:n]))
		text = text[n:]
		all = append(all, m.printed()...)
	}
	if len(all) != 50 {
		t.Fatalf("printed %d lines before the turn ended, want 50: %q", len(all), all)
	}
	if v := m.View().Content; !strings.Contains(v, "the tail") {
		t.Errorf("the tail is not drawn live:\n%s", v)
	}
	m.Update(promptDoneMsg{stop: acp.StopEndTurn})
	all = append(all, m.printed()...)
	seen := map[string]int{}
	for _, l := range all {
		seen[l]++
	}
	for i := 1; i <= 50; i++ {
		if l := fmt.Sprintf("line %02d", i); seen[l] != 1 {
			t.Errorf("%q printed %d times", l, seen[l])
		}
	}
	if seen["the tail"] != 1 {
		t.Errorf("the tail printed %d times: %q", seen["the tail"], all)
	}
}

// A tool card waits in the live region until it finishes, and what
// streams after it is printed after it.
func TestToolCardKeepsOrder(t *testing.T) {
	m := testModel()
	m.feed(t, chunk("agent_message_chunk", "before\n"))
	m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "t1", Title: "Read a.go", Kind: "read", Status: "pending"})
	m.feed(t, chunk("agent_message_chunk", "after\n"))
	got := strings.Join(m.printed(), "\n")
	if !strings.Contains(got, "before") || strings.Contains(got, "after") || strings.Contains(got, "Read a.go") {
		t.Fatalf("printed before the card finished: %q", got)
	}
	m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "t1", Status: "completed"})
	got = strings.Join(m.printed(), "\n")
	card, after := strings.Index(got, "✓ read Read a.go"), strings.Index(got, "after")
	if card < 0 || after < card {
		t.Fatalf("want the finished card, then the text after it: %q", got)
	}
}

// y, a, n, r answer with the optionId of the option of that kind,
// whatever its position; digits pick by position.
func TestPermissionKeysPickOptionByKind(t *testing.T) {
	opts := []acp.PermissionOption{
		{OptionID: "rej-always", Name: "Always reject", Kind: "reject_always"},
		{OptionID: "ok-once", Name: "Allow", Kind: "allow_once"},
		{OptionID: "rej-once", Name: "Reject", Kind: "reject_once"},
		{OptionID: "ok-always", Name: "Always", Kind: "allow_always"},
	}
	for key, want := range map[string]string{"y": "ok-once", "a": "ok-always", "n": "rej-once", "r": "rej-always", "1": "rej-always", "3": "rej-once"} {
		m := testModel()
		reply := make(chan string, 1)
		m.Update(permissionMsg{req: &acp.RequestPermissionRequest{SessionID: "s1",
			ToolCall: acp.ToolCallUpdate{ToolCallID: "t", Title: "Write x"}, Options: opts}, reply: reply})
		m.Update(tea.KeyPressMsg{Code: rune(key[0]), Text: key})
		select {
		case got := <-reply:
			if got != want {
				t.Errorf("key %s answered %q, want %q", key, got, want)
			}
		default:
			t.Errorf("key %s did not answer", key)
		}
		if m.perm != nil {
			t.Errorf("key %s left the question open", key)
		}
	}
}

// Esc on a question answers it cancelled (and cancels the turn).
func TestEscCancelsTheQuestion(t *testing.T) {
	m := testModel()
	m.running = true
	reply := make(chan string, 1)
	m.Update(permissionMsg{req: &acp.RequestPermissionRequest{Options: []acp.PermissionOption{{OptionID: "o", Kind: "allow_once"}}}, reply: reply})
	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if got := <-reply; got != "" {
		t.Errorf("Esc answered %q, want cancelled", got)
	}
}

// A long paste shows as a placeholder and is sent whole; Enter in a paste
// does not send.
func TestLongPasteFoldsAndIsSentWhole(t *testing.T) {
	var in input
	in.insert("see: ")
	paste := strings.Repeat("row\n", 119) + "row"
	in.pasteText(paste)
	if got := in.text(); got != "see: [pasted 120 lines]" {
		t.Errorf("input shows %q", got)
	}
	if got := in.take(); got != "see: "+paste {
		t.Errorf("sent %q", got)
	}
	in.pasteText("one\ntwo")
	if got := in.text(); got != "one\ntwo" {
		t.Errorf("a short paste shows as %q", got)
	}
}

// ↑ and ↓ walk the history and come back to the draft.
func TestHistory(t *testing.T) {
	var in input
	for _, s := range []string{"first", "second"} {
		in.set(s)
		in.take()
	}
	in.set("draft")
	in.up()
	if in.text() != "second" {
		t.Fatalf("↑ gave %q", in.text())
	}
	in.up()
	if in.text() != "first" {
		t.Fatalf("↑↑ gave %q", in.text())
	}
	in.down()
	in.down()
	if in.text() != "draft" {
		t.Fatalf("↓↓ gave %q, want the draft back", in.text())
	}
}

// Ctrl+C clears a draft; on an empty input it arms, and a second quits.
func TestCtrlC(t *testing.T) {
	m := testModel()
	m.in.set("draft")
	ctrlC := tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	m.Update(ctrlC)
	if !m.in.empty() || m.quitting {
		t.Fatalf("Ctrl+C on a draft: input %q, quitting %v", m.in.text(), m.quitting)
	}
	m.Update(ctrlC)
	if m.quitting {
		t.Fatal("one Ctrl+C on an empty input quit")
	}
	m.Update(ctrlC)
	if !m.quitting {
		t.Fatal("a second Ctrl+C on an empty input did not quit")
	}
}

// usage_update and session_info_update reach the status line.
func TestStatusFromUpdates(t *testing.T) {
	m := testModel()
	m.feed(t, acp.UsageUpdate{SessionUpdate: "usage_update", Used: 50_000, Size: 200_000, Cost: &acp.Cost{Amount: 0.5, Currency: "USD"}})
	m.feed(t, acp.SessionInfoUpdate{SessionUpdate: "session_info_update", Title: "Fix the pager"})
	line := ansi.Strip(renderStatus(m.th, m.st, 140))
	for _, want := range []string{"50k/200k ctx (75% left)", "$0.5000", "Fix the pager"} {
		if !strings.Contains(line, want) {
			t.Errorf("status %q lacks %q", line, want)
		}
	}
}

// An agent that wants a login says how, from its auth methods: what to
// set for an env_var method, what to run for a terminal one (as
// codex-acp 0.16.0 answers; test/tui runs the real one).
func TestAuthRequiredBecomesALoginHint(t *testing.T) {
	var methods []authMethod
	must(t, json.Unmarshal([]byte(`[
	  {"id":"chatgpt","name":"Login with ChatGPT","description":"Use your ChatGPT login with Codex CLI"},
	  {"type":"env_var","id":"codex-api-key","name":"Use CODEX_API_KEY","vars":[{"name":"CODEX_API_KEY"}]},
	  {"type":"terminal","id":"tui","name":"Log in in a terminal","args":["--login"]}]`), &methods))
	err := sessionError("session/new", acp.AuthRequired("Authentication required"), methods, []string{"codex-acp"})
	le, ok := err.(*loginError)
	if !ok {
		t.Fatalf("%T %v; want a loginError", err, err)
	}
	want := []string{"• Login with ChatGPT: Use your ChatGPT login with Codex CLI",
		"• Use CODEX_API_KEY: set CODEX_API_KEY in the environment and start again",
		"• Log in in a terminal: run codex-acp --login in a terminal"}
	if le.Error() != "the agent needs a login (Authentication required); log in with one of:" || strings.Join(le.lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q %q\nwant %q", le.Error(), le.lines, want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A line that never ends is broken once long, so the live region does not
// redraw all of it at every frame; nothing of it is lost.
func TestEndlessLineIsBroken(t *testing.T) {
	m := testModel()
	for i := 0; i < 3*maxTail; i++ {
		m.feed(t, chunk("agent_message_chunk", "x"))
	}
	var b *textBlock
	for _, bl := range m.live {
		b = bl.(*textBlock)
	}
	if len(b.tail) > maxTail {
		t.Errorf("the live tail holds %d bytes, over %d", len(b.tail), maxTail)
	}
	m.Update(promptDoneMsg{stop: acp.StopEndTurn})
	if got := strings.Count(strings.Join(m.printed(), ""), "x"); got != 3*maxTail {
		t.Errorf("printed %d x, want %d", got, 3*maxTail)
	}
}

func TestFuzzyRanksNameMatchesFirst(t *testing.T) {
	files := []string{"docs/widgets/readme.md", "internal/wid/x.go", "cmd/widget.go", "a/b/w_i_d.go", "zzz.txt"}
	got := fuzzy(files, "widg", 10)
	if len(got) != 4 || got[0] != "cmd/widget.go" {
		t.Errorf("fuzzy(widg) = %q, want cmd/widget.go first of 4 (not zzz.txt)", got)
	}
	if got := fuzzy(files, "wid", 1); len(got) != 1 {
		t.Errorf("fuzzy(wid) with limit 1 = %q", got)
	}
}

func TestAtWordAtTheCursor(t *testing.T) {
	var in input
	in.set("see @src/ma")
	if w, start, ok := in.atWord(); !ok || w != "src/ma" || start != 4 {
		t.Errorf("atWord = %q %d %v", w, start, ok)
	}
	in.set("mail me@host")
	if _, _, ok := in.atWord(); ok {
		t.Error("an @ inside a word opened the finder")
	}
}

func TestPathsUnderTheSessionAreRelative(t *testing.T) {
	for _, c := range []struct{ p, cwd, want string }{
		{"/w/proj/src/a.go", "/w/proj", "src/a.go"},
		{"/w/other/a.go", "/w/proj", "/w/other/a.go"},
		{"/w/project2/a.go", "/w/proj", "/w/project2/a.go"},
		{"rel/a.go", "/w/proj", "rel/a.go"},
	} {
		if got := relPath(c.p, c.cwd); got != c.want {
			t.Errorf("relPath(%q, %q) = %q, want %q", c.p, c.cwd, got, c.want)
		}
	}
}

// Run writes a blank line before the first frame, so that the live region
// never starts on the screen's top row (run.go, leaveTopRow); the first
// prompt then leaves out the blank line it prints above itself, which is
// on the screen already, and the prompts after it keep theirs.
func TestFirstPromptUsesTheBlankLineWrittenFirst(t *testing.T) {
	m := testModel()
	var out strings.Builder
	leaveTopRow(m, &out)
	if out.String() != "\r\n" {
		t.Fatalf("written before the first frame: %q", out.String())
	}
	m.prompt("one")
	if got := m.printed(); len(got) == 0 || got[0] != "› one" {
		t.Errorf("the first prompt printed %q; want it to start with its own line", got)
	}
	m.prompt("two")
	if got := m.printed(); len(got) < 2 || got[0] != "" || got[1] != "› two" {
		t.Errorf("the second prompt printed %q; want a blank line above it", got)
	}

	// Something printed before the first prompt (a note, a loaded
	// session) keeps the prompt's blank line.
	m = testModel()
	leaveTopRow(m, &out)
	m.printLines("! a note")
	m.prompt("one")
	if got := m.printed(); len(got) < 3 || got[1] != "" || got[2] != "› one" {
		t.Errorf("after a note the first prompt printed %q; want a blank line above it", got)
	}
}
