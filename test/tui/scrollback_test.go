package tui_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

var numbered = regexp.MustCompile(`(?m)^streamed line (\d{4})\s*$`)

// A long streamed answer lands in the terminal's scrollback with each line
// exactly once: none lost, none repeated by a redraw, also when the
// terminal shrinks and grows mid-stream.
func TestScrollbackHoldsEachLineOnce(t *testing.T) {
	const n = 2000
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "streamed line %04d\n", i)
	}
	text, _ := json.Marshal(b.String())
	s := newSession(t)
	model := s.script("long.json", fmt.Sprintf(`{"chunkSize": 40, "delayMs": 1, "responses": [{"parts": [{"type": "text", "text": %s}]}]}`, text))
	tm := s.open(80, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("count")
	tm.keys("Enter")
	tm.waitFor("streamed line 0300")
	tm.tmux("resize-window", "-t", "main", "-x", "60", "-y", "20")
	tm.waitFor("streamed line 1000")
	tm.tmux("resize-window", "-t", "main", "-x", "100", "-y", "30")
	tm.waitFor(fmt.Sprintf("streamed line %04d", n))
	out := tm.idle()
	seen := map[string]int{}
	for _, m := range numbered.FindAllStringSubmatch(out, -1) {
		seen[m[1]]++
	}
	for i := 1; i <= n; i++ {
		if c := seen[fmt.Sprintf("%04d", i)]; c != 1 {
			t.Errorf("line %04d appears %d times in the scrollback", i, c)
		}
	}
}
