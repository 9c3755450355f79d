package tui_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// scriptedAnswer is a scripted model that streams text slowly.
func scriptedAnswer(s *session, name, text string) string {
	q, _ := json.Marshal(text)
	return s.script(name, fmt.Sprintf(`{"chunkSize": 8, "delayMs": 2, "responses": [{"parts": [{"type": "text", "text": %s}]}]}`, q))
}

// A fenced Go block is highlighted in the terminal: the keyword and the
// name after it are drawn in different styles (without highlighting the
// whole line is one run of the code colour).
func TestCodeBlockHighlighted(t *testing.T) {
	s := newSession(t)
	model := scriptedAnswer(s, "code.json", "Here:\n\n```go\nfunc Greet(name string) int {\n\treturn 42 // the answer\n}\n```\nDone.")
	tm := s.open(80, 24, nil, "tui", "--theme", "dark", "-m", model)
	tm.ready()
	tm.typeText("show code")
	tm.keys("Enter")
	tm.waitFor("Done.")
	tm.idle()
	out := tm.colours()
	sgr := `\x1b\[[0-9;:]*m`
	for _, re := range []string{`func` + sgr + `\s*Greet`, `return` + sgr + `\s*` + sgr + `?42`, sgr + `// the answer`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no style change matching %q in:\n%q", re, grepLines(out, "Greet", "return"))
		}
	}
}

func grepLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// A thought is collapsed to one summary line; Ctrl+T prints it in full.
func TestThoughtCollapsedThenShown(t *testing.T) {
	s := newSession(t)
	model := s.script("think.json", `{"chunkSize": 8, "delayMs": 2, "responses": [
	  {"parts": [{"type": "thinking", "text": "First, read the pager.\nSecond, find the off-by-one.\nThird, fix it."},
	             {"type": "text", "text": "The pager is fixed."}]}]}`)
	tm := s.open(80, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("fix the pager")
	tm.keys("Enter")
	tm.waitFor("The pager is fixed.")
	out := tm.idle()
	if !strings.Contains(out, "∴ Thought: First, read the pager. (3 lines, Ctrl+T shows)") || strings.Contains(out, "find the off-by-one") {
		t.Fatalf("the thought is not collapsed to its summary:\n%s", out)
	}
	tm.keys("C-t")
	out = tm.waitFor("Third, fix it.")
	if !strings.Contains(out, "Second, find the off-by-one.") {
		t.Errorf("Ctrl+T did not show the whole thought:\n%s", out)
	}
}

// At 140 columns an edit's diff in the permission question is split side
// by side (old left, new right); at 80 it is unified.
func TestWideDiffIsSplit(t *testing.T) {
	for _, c := range []struct {
		width int
		split bool
	}{{140, true}, {80, false}} {
		t.Run(fmt.Sprint(c.width), func(t *testing.T) {
			s := newSession(t)
			must(t, os.WriteFile(filepath.Join(s.dir, "notes.txt"), []byte("old notes\nkept\n"), 0o644))
			tm := s.open(c.width, 30, nil, "tui", "-m", s.script("edit.json", editScript))
			tm.ready()
			tm.typeText("write the notes")
			tm.keys("Enter")
			q := tm.waitFor("[r/4]")
			row := grepLines(q, "+written by corvid")
			if split := strings.Contains(row, "-old notes") && strings.Contains(row, "│"); split != c.split {
				t.Errorf("at %d columns split=%v, want %v:\n%s", c.width, split, c.split, q)
			}
			tm.keys("n")
			tm.waitFor("Finished with notes.txt.")
		})
	}
}

// A shell call's output shows in its card while it runs; when it ends the
// card keeps a one-line summary, and Ctrl+O prints the output in full.
func TestShellOutputLiveThenSummary(t *testing.T) {
	s := newSession(t)
	model := s.script("shell.json", `{"responses": [
	  {"parts": [{"type": "tool_call", "name": "shell", "input": {"command": "for i in 1 2 3 4 5 6 7 8 9 10; do echo out-line-$i; sleep 0.3; done"}}]},
	  {"parts": [{"type": "text", "text": "All ten printed."}]}], "onExhausted": "repeat-last"}`)
	tm := s.open(80, 30, nil, "tui", "--yolo", "-m", model)
	tm.ready()
	tm.typeText("count to ten")
	tm.keys("Enter")
	live := tm.waitFor("out-line-3")
	if strings.Contains(live, "All ten printed.") {
		t.Fatalf("the output showed only after the call ended:\n%s", live)
	}
	tm.waitFor("All ten printed.")
	out := tm.idle()
	if !strings.Contains(out, "└ 10 lines: out-line-10") {
		t.Errorf("no summary of the output in the card:\n%s", out)
	}
	if strings.Contains(out, "out-line-3\n") {
		t.Errorf("the live output was left in the scrollback:\n%s", out)
	}
	tm.keys("C-o")
	full := tm.waitFor("  out-line-3")
	full = full[strings.LastIndex(full, "$ for i in"):]
	for i := 1; i <= 10; i++ {
		if n := strings.Count(full, fmt.Sprintf("out-line-%d\n", i)); n != 1 {
			t.Errorf("after Ctrl+O out-line-%d shows %d times:\n%s", i, n, full)
		}
	}
}

// Two sub-agents (team members) answer during a turn: their lines are
// labelled by member in the terminal, and the main answer is not.
func TestMemberOutputLabelledByMember(t *testing.T) {
	s := newSession(t)
	child := func(name string) string {
		return s.script(name+".json", fmt.Sprintf(`{"chunkSize": 5, "delayMs": 2, "responses": [
		  {"parts": [{"type": "text", "text": "%s reports line one\n%s reports line two"}]}]}`, name, name))
	}
	task := func(id, name string) string {
		return fmt.Sprintf(`{"type": "tool_call", "id": %q, "name": "task", "input": {"name": %q, "description": "review", "prompt": "review it", "model": %q}}`,
			id, name, child(name))
	}
	model := s.script("team.json", `{"responses": [
	  {"parts": [{"type": "text", "text": "Asking two reviewers."}, `+task("t1", "alice")+`, `+task("t2", "bob")+`]},
	  {"parts": [{"type": "text", "text": "Both reviewers answered."}]}], "onExhausted": "repeat-last"}`)
	tm := s.open(100, 40, nil, "tui", "--yolo", "-m", model)
	tm.ready()
	tm.typeText("review")
	tm.keys("Enter")
	tm.waitFor("Both reviewers answered.")
	out := tm.idle()
	if l := grepLines(out, "Both reviewers answered.", "Asking two reviewers."); strings.Contains(l, "│") {
		t.Errorf("the main answer is labelled as a member's:\n%s", l)
	}
	for _, name := range []string{"alice", "bob"} {
		for _, l := range []string{"line one", "line two"} {
			want := name + " │ " + name + " reports " + l
			if n := strings.Count(out, want); n != 1 {
				t.Errorf("%q shows %d times:\n%s", want, n, out)
			}
		}
	}
}

// The model asks two questions (ask_user): the TUI, which declares form
// elicitation, shows a form; a choice by arrow and Enter and a typed answer
// go back, and the model reads them.
func TestAskUserForm(t *testing.T) {
	s := newSession(t)
	model := s.script("ask.json", `{"responses": [
	  {"parts": [{"type": "tool_call", "name": "ask_user", "input": {"questions": [
	    {"header": "Database", "question": "Which database?", "options": [{"label": "Postgres", "description": "relational"}, {"label": "SQLite"}]},
	    {"header": "Name", "question": "The service's name?"}]}}]},
	  {"parts": [{"type": "text", "text": "Thanks for answering."}]}], "onExhausted": "repeat-last"}`)
	tm := s.open(80, 30, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("set it up")
	tm.keys("Enter")
	q := tm.waitFor("Tab, Enter next field")
	for _, w := range []string{"Database", "1 ○ Postgres relational", "2 ○ SQLite", "The service's name?"} {
		if !strings.Contains(q, w) {
			t.Errorf("the form lacks %q:\n%s", w, q)
		}
	}
	tm.keys("Down", "Enter")
	tm.typeText("billing")
	tm.keys("Enter")
	out := tm.waitFor("Thanks for answering.")
	if !strings.Contains(out, "Database → SQLite; Name → billing") {
		t.Errorf("the answer is not shown:\n%s", out)
	}
}
