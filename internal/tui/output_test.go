package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
)

func textContent(s string) []acp.ToolCallContent {
	return []acp.ToolCallContent{{Type: "content", Content: &acp.ContentBlock{Type: "text", Text: s}}}
}

// A running shell call's card shows its output's tail live and prints
// nothing; the finished card is printed once with a summary line, and
// Ctrl+O prints the whole output.
func TestShellOutputTailThenSummary(t *testing.T) {
	m := testModel()
	m.running = true
	m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "t1", Title: "count", Kind: "execute",
		Status: "in_progress", RawInput: []byte(`{"command":"seq 20"}`)})
	var out []string
	for i := 1; i <= 20; i++ {
		out = append(out, strings.Repeat("x", i))
		m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "t1",
			Content: textContent("```\n" + strings.Join(out, "\n") + "\n```")})
	}
	if p := m.printed(); len(p) != 0 {
		t.Fatalf("a running card printed %q", p)
	}
	v := m.View().Content
	if !strings.Contains(v, strings.Repeat("x", 20)) || strings.Contains(v, "xxxxxxxxxxxxxx\n") {
		t.Errorf("the live card does not keep the tail only:\n%s", v)
	}
	m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "t1", Status: "completed",
		Content: textContent("```\n" + strings.Join(out, "\n") + "\n```")})
	got := strings.Join(m.printed(), "\n")
	if !strings.Contains(got, "└ 20 lines: "+strings.Repeat("x", 20)) || strings.Count(got, "\n") != 2 {
		t.Errorf("the finished card is not head, command and summary:\n%s", got)
	}
	m.Update(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	got = strings.Join(m.printed(), "\n")
	if !strings.HasPrefix(got, "$ seq 20") || strings.Count(got, "\n") != 20 {
		t.Errorf("Ctrl+O printed:\n%s", got)
	}
}
