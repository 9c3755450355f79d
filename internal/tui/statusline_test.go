package tui

import (
	"testing"

	"github.com/corvid-agent/corvid/internal/acp"
)

// The status line is drawn again only when what it shows, its theme or
// its width change; otherwise a frame reuses it (issue 36: lipgloss's
// rendering of it at every frame was most of View's CPU once the input's
// was gone). What is drawn is what renderStatus draws.
func TestStatusLineIsDrawnOnceForItsLooks(t *testing.T) {
	dark, light := newTheme(true, true), newTheme(false, true)
	cost := &acp.Cost{Amount: 0.25, Currency: "USD"}
	var memo statusMemo
	check := func(th *theme, s status, w int) {
		t.Helper()
		if got, want := memo.render(th, s, w), renderStatus(th, s, w); got != want {
			t.Fatalf("%+v at %d: drew %q, want %q", s, w, got, want)
		}
	}
	s := status{model: "m", mode: "code", used: 1200, size: 200000, cost: cost, working: true}
	check(dark, s, 100)
	check(dark, s, 100)
	check(dark, s, 60)
	check(light, s, 60)
	s.working = false
	check(light, s, 60)
	s.used = 5000
	check(light, s, 60)
	cost.Amount = 0.5 // the same Cost, changed: the line follows
	check(light, s, 60)
	s.cost = nil
	check(light, s, 60)
	s.title, s.note, s.endpoint = "T", "note", "host:1"
	check(light, s, 60)
	if n := testing.AllocsPerRun(100, func() { memo.render(light, s, 60) }); n != 0 {
		t.Errorf("an unchanged status line costs %v allocations a frame, want 0", n)
	}
}
