package tui_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

var updateREADME = flag.Bool("update", false, "rewrite the README's terminal screenshot")

const (
	shotStart = "<!-- tui-screenshot: made by TestREADMEScreenshot (go test ./test/tui/ -run Screenshot -update) -->\n```text\n"
	shotEnd   = "```\n<!-- tui-screenshot end -->"
)

// The README's picture of corvid in a terminal is this test's capture of
// the pane: a prompt, thinking, a write asked and allowed, the answer.
func TestREADMEScreenshot(t *testing.T) {
	s := newSession(t)
	s.script("demo.json", `{"responses": [
	  {"parts": [{"type": "thinking", "text": "The user wants a greeting file."},
	             {"type": "text", "text": "I will write **hello.txt**."},
	             {"type": "tool_call", "name": "write", "input": {"path": "hello.txt", "content": "Hello, corvid!\n"}}],
	   "usage": {"inputTokens": 1200, "outputTokens": 40}},
	  {"parts": [{"type": "text", "text": "Done: `+"`hello.txt`"+` now says hello."}],
	   "usage": {"inputTokens": 1500, "outputTokens": 20}}]}`)
	tm := s.open(80, 24, nil, "tui", "-m", "script:demo.json")
	tm.ready()
	tm.typeText("Write a hello file")
	tm.keys("Enter")
	tm.waitFor("[r/4]")
	tm.keys("y")
	tm.waitFor("now says hello.")
	tm.idle()
	var lines []string
	for _, l := range strings.Split(tm.all(), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	shot := strings.TrimLeft(strings.TrimRight(strings.Join(lines, "\n"), "\n"), "\n") + "\n"

	root, err := testkit.ModuleRoot()
	must(t, err)
	readme := filepath.Join(root, "README.md")
	b, err := os.ReadFile(readme)
	must(t, err)
	i, j := strings.Index(string(b), shotStart), strings.Index(string(b), shotEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no screenshot block (%q … %q)", shotStart, shotEnd)
	}
	current := string(b)[i+len(shotStart) : j]
	if *updateREADME {
		must(t, os.WriteFile(readme, []byte(string(b)[:i+len(shotStart)]+shot+string(b)[j:]), 0o644))
		return
	}
	if current != shot {
		t.Errorf("README.md's screenshot is not what the TUI draws now (rerun with -update):\n%s", shot)
	}
}
