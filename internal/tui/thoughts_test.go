package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/corvid-agent/corvid/internal/acp"
)

func ctrlT() tea.KeyPressMsg { return tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl} }

// A thought is collapsed by default: one live line while it streams, one
// summary line in the scrollback; Ctrl+T prints it in full afterwards,
// and expands the next one as it streams.
func TestThoughtsCollapseAndExpand(t *testing.T) {
	m := testModel()
	m.running = true
	m.feed(t, chunk("agent_thought_chunk", "Read the test first.\nThen the pager.\nThen"))
	if p := m.printed(); len(p) != 0 {
		t.Fatalf("a collapsed thought printed lines while streaming: %q", p)
	}
	v := ansi.Strip(m.View().Content)
	if !strings.Contains(v, "∴ Thinking: Then") || strings.Contains(v, "Read the test first.") {
		t.Errorf("the live region does not show the thought as one line:\n%s", v)
	}
	m.feed(t, chunk("agent_thought_chunk", " fix it."))
	m.feed(t, chunk("agent_message_chunk", "Fixed.\n"))
	got := strings.Join(m.printed(), "\n")
	want := "∴ Thought: Read the test first. (3 lines, Ctrl+T shows)\n\nFixed."
	if got != want {
		t.Errorf("printed:\n%q\nwant:\n%q", got, want)
	}
	m.Update(ctrlT())
	got = strings.Join(m.printed(), "\n")
	for _, w := range []string{"Read the test first.", "Then the pager.", "Then fix it."} {
		if !strings.Contains(got, w) {
			t.Errorf("Ctrl+T did not print %q of the last thought: %q", w, got)
		}
	}
	// Expanded: the next thought's lines go to the scrollback as they end.
	m.feed(t, chunk("agent_thought_chunk", "Second thought.\nmore"))
	if got := strings.Join(m.printed(), "\n"); !strings.Contains(got, "Second thought.") || strings.Contains(got, "∴") {
		t.Errorf("an expanded thought printed %q", got)
	}
	m.Update(promptDoneMsg{stop: acp.StopEndTurn})
	if got := strings.Join(m.printed(), "\n"); !strings.Contains(got, "more") {
		t.Errorf("the expanded thought's tail was not printed: %q", got)
	}
}

// Collapsing mid-thought holds the rest of it for the summary; expanding
// mid-thought releases what was held, each line once.
func TestThoughtToggleMidStream(t *testing.T) {
	m := testModel()
	m.running = true
	m.feed(t, chunk("agent_thought_chunk", "one\ntwo\n"))
	m.Update(ctrlT()) // expand: one and two go out now
	m.feed(t, chunk("agent_thought_chunk", "three\n"))
	m.Update(ctrlT()) // collapse again
	m.feed(t, chunk("agent_thought_chunk", "four\n"))
	m.Update(promptDoneMsg{stop: acp.StopEndTurn})
	all := strings.Join(m.printed(), "\n")
	for _, w := range []string{"one", "two", "three"} {
		if strings.Count(all, w) != 1 {
			t.Errorf("%q printed %d times: %q", w, strings.Count(all, w), all)
		}
	}
	if strings.Contains(all, "four\n") || !strings.Contains(all, "∴ Thought") {
		t.Errorf("the collapsed rest is not a summary: %q", all)
	}
}

// Ctrl+T is the thoughts action: rebound under [tui.keys], the new key
// expands thoughts, Ctrl+T types nothing special, and the summary names
// the key as bound (or none when unbound).
func TestThoughtsKeyRebinds(t *testing.T) {
	m := testModel()
	m.keys["alt+t"] = "thoughts"
	delete(m.keys, "ctrl+t")
	m.running = true
	m.feed(t, chunk("agent_thought_chunk", "One.\nTwo.\n"))
	m.feed(t, chunk("agent_message_chunk", "Done.\n"))
	if got := strings.Join(m.printed(), "\n"); !strings.Contains(got, "(2 lines, Alt+T shows)") {
		t.Errorf("the summary does not name the bound key: %q", got)
	}
	m.Update(ctrlT())
	if got := strings.Join(m.printed(), "\n"); strings.Contains(got, "Two.") {
		t.Errorf("Ctrl+T still shows the thought after it was rebound: %q", got)
	}
	m.Update(tea.KeyPressMsg{Code: 't', Mod: tea.ModAlt})
	if got := strings.Join(m.printed(), "\n"); !strings.Contains(got, "Two.") {
		t.Errorf("the rebound key did not print the last thought: %q", got)
	}
	m.Update(tea.KeyPressMsg{Code: 't', Mod: tea.ModAlt}) // collapsed again
	delete(m.keys, "alt+t")
	m.feed(t, chunk("agent_thought_chunk", "Three.\nFour.\n"))
	m.feed(t, chunk("agent_message_chunk", "Done.\n"))
	if got := strings.Join(m.printed(), "\n"); !strings.Contains(got, "(2 lines)") || strings.Contains(got, "shows") {
		t.Errorf("the summary of a thought whose key is unbound: %q; want (2 lines) and no key", got)
	}
}
