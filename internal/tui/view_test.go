package tui

import (
	"strings"
	"testing"
)

// The unfinished line of a stream is rendered again only when it changed
// (tailRows): after each change, of its text, the width or the theme, the
// live region drawn is the one drawn without the kept rendering.
func TestLiveTailIsDrawnAsItChanges(t *testing.T) {
	m := testModel()
	m.width, m.height = 40, 30
	fresh := func() string {
		for _, bl := range m.live {
			if b, ok := bl.(*textBlock); ok {
				b.drawn = drawnTail{}
			}
		}
		return m.View().Content
	}
	check := func(step string) {
		t.Helper()
		kept := m.View().Content
		if again := m.View().Content; again != kept {
			t.Fatalf("%s: two frames with nothing changed differ:\n%s\n---\n%s", step, kept, again)
		}
		if want := fresh(); kept != want {
			t.Fatalf("%s: the live region drawn is\n%s\nwant\n%s", step, kept, want)
		}
	}
	m.feed(t, chunk("agent_message_chunk", "alpha"))
	check("first chunk")
	if !strings.Contains(m.View().Content, "alpha") {
		t.Fatalf("the tail is not drawn:\n%s", m.View().Content)
	}
	m.feed(t, chunk("agent_message_chunk", " beta **bold"))
	check("a chunk appended")
	m.feed(t, chunk("agent_message_chunk", "** gamma"))
	check("emphasis closed by a later chunk")
	m.feed(t, chunk("agent_message_chunk", "\nalpha beta **bold** gam")) // a new tail as long as the last
	check("a newline, then a tail of the same length")
	m.feed(t, chunk("agent_message_chunk", strings.Repeat("word ", 30)))
	check("a tail over several rows")
	m.width = 25
	check("narrower")
	m.th = newTheme(false, true)
	check("another theme")
	m.feed(t, chunk("agent_thought_chunk", "thinking"))
	check("another kind of text closes the tail")
	m.feed(t, chunk("agent_message_chunk", "```go\nfunc main() {"))
	check("the tail inside a code block")
}

// BenchmarkFrameLongTail: a frame drawn while a stream's unfinished line
// is 4,000 bytes long and unchanged, as keys and prints draw them between
// the stream's updates.
func BenchmarkFrameLongTail(b *testing.B) {
	m := testModel()
	m.width, m.height = 100, 30
	m.addText("agent", strings.Repeat("x", 4000))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}
