package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/corvid-agent/corvid/internal/acp"
)

func memberChunk(kind, member, text string) acp.ContentChunk {
	c := chunk(kind, text)
	c.Meta = acp.Meta{memberMeta: memberTag(member)}
	return c
}

// memberTag is corvid's sub-agent tag of a member (the TUI reads only its
// name and parentToolCallId).
func memberTag(name string) map[string]any {
	return map[string]any{"id": "sub_" + name, "name": name, "parentToolCallId": "", "depth": 1}
}

// Two members streaming at once and the main answer: every member line is
// printed once, behind its member's label, and none joins the answer.
func TestMemberOutputLabelled(t *testing.T) {
	m := testModel()
	m.running = true
	m.feed(t, chunk("agent_message_chunk", "Asking the team: "))
	m.feed(t, memberChunk("agent_message_chunk", "alice", "alice one\nalice "))
	m.feed(t, memberChunk("agent_message_chunk", "bob", "bob one\n"))
	m.feed(t, memberChunk("agent_message_chunk", "alice", "two\n"))
	m.feed(t, memberChunk("agent_message_chunk", "bob", "bob tail"))
	m.feed(t, memberChunk("agent_thought_chunk", "bob", "a member's thought\n"))
	m.feed(t, chunk("agent_message_chunk", "done.\n"))
	v := ansi.Strip(m.View().Content)
	if !strings.Contains(v, "bob │ bob tail") {
		t.Errorf("a member's unfinished line is not drawn live with its label:\n%s", v)
	}
	m.Update(promptDoneMsg{stop: acp.StopEndTurn})
	got := strings.Join(m.printed(), "\n")
	for _, w := range []string{"alice │ alice one", "bob │ bob one", "alice │ alice two", "bob │ bob tail", "Asking the team: done."} {
		if strings.Count(got, w) != 1 {
			t.Errorf("%q printed %d times:\n%s", w, strings.Count(got, w), got)
		}
	}
	if strings.Contains(got, "thought") {
		t.Errorf("a member's thought was printed while thoughts are collapsed:\n%s", got)
	}
	// A member's tool call is labelled; its plan is not the session's.
	m.running = true
	m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "s.sub_1/c1", Title: "Read a.go", Kind: "read",
		Status: "completed", Meta: acp.Meta{memberMeta: memberTag("alice")}})
	m.feed(t, acp.PlanUpdate{SessionUpdate: "plan", Entries: []acp.PlanEntry{{Content: "alice's step", Status: "pending"}},
		Meta: acp.Meta{memberMeta: memberTag("alice")}})
	if got := strings.Join(m.printed(), "\n"); !strings.Contains(got, "read [alice] Read a.go") {
		t.Errorf("the member's card is not labelled:\n%s", got)
	}
	if len(m.plan) != 0 {
		t.Errorf("a member's plan became the session's: %v", m.plan)
	}
}

// When the task call that started a member ends, the member's unfinished
// line is printed then, not at the end of the turn.
func TestMemberTailPrintedWhenItsTaskEnds(t *testing.T) {
	m := testModel()
	m.running = true
	m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "t1", Title: "Sub-agent alice", Kind: "other", Status: "in_progress"})
	c := memberChunk("agent_message_chunk", "alice", "no newline at the end")
	c.Meta[memberMeta] = map[string]any{"parentToolCallId": "t1", "name": "alice"}
	m.feed(t, c)
	m.feed(t, memberChunk("agent_message_chunk", "bob", "bob's tail"))
	if got := strings.Join(m.printed(), "\n"); strings.Contains(got, "no newline") {
		t.Fatalf("printed before its task ended: %q", got)
	}
	m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "t1", Status: "completed"})
	got := strings.Join(m.printed(), "\n")
	if !strings.Contains(got, "alice │ no newline at the end") || strings.Contains(got, "bob's tail") {
		t.Errorf("after the task ended printed:\n%s", got)
	}
}
