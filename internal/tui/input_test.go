package tui

import (
	"slices"
	"testing"
)

// An empty input is drawn from what was drawn last for the same theme,
// width, focus and placeholder: while an answer streams, every frame has
// it, and rendering it again with lipgloss was most of View's CPU
// (issue 36). What is drawn is what a fresh input draws, and follows any
// change of those.
func TestEmptyInputIsDrawnOnceForItsLooks(t *testing.T) {
	fresh := func(th *theme, w int, focused bool, ph string) []string {
		var in input
		return in.render(th, w, focused, ph)
	}
	dark, light, plain := newTheme(true, true), newTheme(false, true), newTheme(true, false)
	var in input
	for _, c := range []struct {
		th      *theme
		w       int
		focused bool
		ph      string
	}{
		{dark, 80, true, "Ask"}, {dark, 80, true, "Ask"}, {dark, 40, true, "Ask"},
		{dark, 40, false, "Ask"}, {dark, 40, false, "starting…"}, {light, 40, false, "starting…"},
		{plain, 40, false, "starting…"}, {dark, 80, true, "Ask"},
	} {
		if got, want := in.render(c.th, c.w, c.focused, c.ph), fresh(c.th, c.w, c.focused, c.ph); !slices.Equal(got, want) {
			t.Fatalf("%+v: drew %q, want %q", c, got, want)
		}
	}
	in.insert("hi")
	if got, want := in.render(dark, 80, true, "Ask"), fresh(dark, 80, true, "Ask"); slices.Equal(got, want) {
		t.Fatalf("a typed input drew the empty one: %q", got)
	}
	in.reset()
	if got, want := in.render(dark, 80, true, "Ask"), fresh(dark, 80, true, "Ask"); !slices.Equal(got, want) {
		t.Fatalf("emptied again: drew %q, want %q", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { in.render(dark, 80, true, "Ask") }); n != 0 {
		t.Errorf("an unchanged empty input costs %v allocations a frame, want 0", n)
	}
}
