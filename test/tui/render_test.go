package tui_test

import (
	"encoding/json"
	"fmt"
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
