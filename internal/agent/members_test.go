package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMemberRootNamesTheRootOfAMemberID(t *testing.T) {
	s := &Session{ID: "sess_abc"}
	s.sub.root = s
	id := s.newMemberID()
	if root, ok := MemberRoot(id); !ok || root != "sess_abc" || !strings.HasPrefix(id, "sess_abc.sub_") {
		t.Fatalf("MemberRoot(%q) = %q, %v", id, root, ok)
	}
	for _, bad := range []string{"sess_abc", "sub_abc", ".sub_abc", "sess_abc.sub_", ""} {
		if root, ok := MemberRoot(bad); ok {
			t.Errorf("MemberRoot(%q) = %q, true; want not a member id", bad, root)
		}
	}
}

// tagged is an update of sub-agent id, started by tool call parent.
func tagged(kind EventKind, id, parent, text string) Event {
	return Event{Kind: kind, Content: &Block{Type: BlockText, Text: text},
		Tags: Tags{Member: &Member{ID: id, Name: "n-" + id, ParentToolCallID: parent}}}
}

// The filter keeps the member's updates and those of the sub-agents it
// started (at any depth), drops the root's and other members', and opens
// with the member's task prompt from the root's task call.
func TestMemberFilterKeepsTheMemberAndItsSubAgents(t *testing.T) {
	const m = "sess_r.sub_m"
	taskIn, _ := json.Marshal(map[string]any{"description": "d", "prompt": "do the thing"})
	in := []Event{
		{Kind: EventToolCall, ToolCall: &ToolCall{ID: "call-1", Name: "task", RawInput: taskIn}},
		{Kind: EventMessageChunk, Content: &Block{Type: BlockText, Text: "root"}},
		tagged(EventMessageChunk, m, "call-1", "member"),
		tagged(EventMessageChunk, "sess_r.sub_other", "call-2", "other"),
		tagged(EventMessageChunk, "sess_r.sub_child", m+"/c1", "child"),
		tagged(EventMessageChunk, "sess_r.sub_grand", "sess_r.sub_child/c9", "grandchild"),
		tagged(EventMessageChunk, m, "call-1", "again"),
	}
	f := newMemberFilter(m)
	var got []string
	for _, ev := range in {
		f.take(ev, func(ev Event) { got = append(got, string(ev.Kind)+":"+ev.Content.Text) })
	}
	want := []string{"user_message_chunk:do the thing", "agent_message_chunk:member", "agent_message_chunk:child",
		"agent_message_chunk:grandchild", "agent_message_chunk:again"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("kept %q\nwant %q", got, want)
	}
	if f.name != "n-"+m || f.matched != 4 {
		t.Fatalf("name %q matched %d", f.name, f.matched)
	}
}
