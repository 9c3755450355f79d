package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/acp"
)

func connectedModel() *model {
	m := newModel(Options{Endpoint: "unix:/run/s.sock"}, newTheme(true, false))
	m.width, m.height = 80, 24
	m.sessionID, m.ready = "s1", true
	return m
}

func msgChunk(id, text string) acp.ContentChunk {
	return acp.ContentChunk{SessionUpdate: "agent_message_chunk", Content: acp.TextBlock(text), MessageID: id}
}

// A re-attach replays the whole session; only what the screen had not
// shown goes on: the rest of a message cut by the drop, tool calls that
// had not ended, new messages. Nothing is printed twice.
func TestRejoinReplayShowsOnlyWhatIsNew(t *testing.T) {
	m := connectedModel()
	m.prompt("hi") // its answer is cut off by the drop: known by its text
	m.feed(t, msgChunk("m1", "First line.\n"))
	m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "t1", Title: "Read a.go", Kind: "read", Status: "completed"})
	m.feed(t, msgChunk("m2", "Half of "))
	m.feed(t, msgChunk("m2", "the sec"))
	before := m.printed()

	// The connection drops; the re-attach's session/load replays.
	m.rejoining = true
	m.shown.startReplay()
	m.feed(t, acp.ContentChunk{SessionUpdate: "user_message_chunk", Content: acp.TextBlock("hi"), MessageID: "u1"})
	m.feed(t, msgChunk("m1", "First line.\n"))
	m.feed(t, acp.ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "t1", Title: "Read a.go", Kind: "read", Status: "completed"})
	m.feed(t, msgChunk("m2", "Half of the second line.\n"))
	m.Update(sessionMsg{id: "s1", loaded: true, rejoin: true})
	m.feed(t, msgChunk("m2", "Live again.\n"))
	m.feed(t, msgChunk("m3", "A new message.\n"))
	m.settle()
	all := strings.Join(append(before, m.printed()...), "\n")
	for _, want := range []string{"First line.", "Read a.go", "Half of the second line.", "Live again.", "A new message.", "reconnected to unix:/run/s.sock"} {
		if n := strings.Count(all, want); n != 1 {
			t.Errorf("%q is printed %d times:\n%s", want, n, all)
		}
	}
	if n := strings.Count(all, "hi"); n != 1 {
		t.Errorf("the screen's own prompt is printed %d times:\n%s", n, all)
	}
}

// A question another client answered first is closed, and says who
// answered when the tool call's update names them (before or after).
func TestQuestionAnsweredElsewhereNamesTheClient(t *testing.T) {
	for _, metaFirst := range []bool{true, false} {
		m := connectedModel()
		req := &acp.RequestPermissionRequest{SessionID: "s1", ToolCall: acp.ToolCallUpdate{ToolCallID: "t1", Title: "Write notes.txt"}}
		update, _ := json.Marshal(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress",
			"_meta": map[string]any{"corvid.dev/answeredBy": map[string]any{"name": "zed", "title": "Zed", "version": "0.220.0"}}})
		m.Update(permissionMsg{req: req, reply: make(chan string, 1)})
		if metaFirst {
			m.Update(updateMsg{sessionID: "s1", raw: update})
		}
		m.answeredElsewhere(req)
		m.withdraw(req)
		if !metaFirst {
			m.Update(updateMsg{sessionID: "s1", raw: update})
		}
		if m.perm != nil {
			t.Fatal("the question is still open")
		}
		all := strings.Join(m.printed(), "\n")
		if !strings.Contains(all, "Write notes.txt") || !strings.Contains(all, "Zed 0.220.0") {
			t.Errorf("metaFirst=%v: who answered is not told:\n%s", metaFirst, all)
		}
	}
}

// A re-attach the daemon refuses (it lost the session) ends the
// reconnection: the error is shown and the input works again (/new).
func TestRejoinRefusedEndsTheReconnection(t *testing.T) {
	m := connectedModel()
	m.offline, m.rejoining, m.attempts = true, true, 3
	m.st.note = "reconnecting…"
	m.Update(sessionMsg{rejoin: true, err: errSessionGone})
	if m.offline || m.rejoining || m.st.note != "" {
		t.Errorf("still reconnecting: offline %v, rejoining %v, note %q", m.offline, m.rejoining, m.st.note)
	}
	if all := strings.Join(m.printed(), "\n"); !strings.Contains(all, "no such session") {
		t.Errorf("the error is not shown:\n%s", all)
	}
}

var errSessionGone = acp.InvalidParams("no such session", "")

// The $/cancel_request that withdraws a question may name who answered in
// its _meta (the dashboard's reading of corvid serve): the TUI says so.
func TestWithdrawalThatNamesTheClientIsTold(t *testing.T) {
	m := connectedModel()
	req := &acp.RequestPermissionRequest{SessionID: "s1", ToolCall: acp.ToolCallUpdate{ToolCallID: "t1", Title: "Write notes.txt"}}
	m.Update(permissionMsg{req: req, reply: make(chan string, 1)})
	m.Update(permissionDoneMsg{req: req, by: json.RawMessage(`{"name":"corvid-dashboard","version":"1"}`)})
	if m.perm != nil {
		t.Fatal("the question is still open")
	}
	if all := strings.Join(m.printed(), "\n"); !strings.Contains(all, "Write notes.txt → answered by corvid-dashboard 1") {
		t.Errorf("who answered is not told:\n%s", all)
	}
}

// A dropped connection withdraws the open forms as it does permission
// questions (the daemon asks again once the session is attached again):
// each is answered cancel, none stays on screen, and a form asked after
// the re-attach opens as usual.
func TestConnectionLostWithdrawsForms(t *testing.T) {
	m := connectedModel()
	ask := func(msg string) chan acp.CreateElicitationResponse {
		reply := make(chan acp.CreateElicitationResponse, 1)
		m.Update(elicitMsg{req: &acp.CreateElicitationRequest{SessionID: "s1", Mode: "form", Message: msg,
			RequestedSchema: json.RawMessage(formSchema)}, reply: reply})
		return reply
	}
	first, second := ask("First"), ask("Second")
	perm := make(chan string, 1)
	m.Update(permissionMsg{req: &acp.RequestPermissionRequest{SessionID: "s1", ToolCall: acp.ToolCallUpdate{ToolCallID: "t1"}}, reply: perm})
	if m.form == nil || len(m.formQ) != 1 {
		t.Fatalf("the forms did not open: %+v %d", m.form, len(m.formQ))
	}
	m.Update(agentGoneMsg{ag: m.ag})
	for i, r := range []chan acp.CreateElicitationResponse{first, second} {
		select {
		case got := <-r:
			if got.Action != "cancel" {
				t.Errorf("form %d answered %q; want cancel", i, got.Action)
			}
		default:
			t.Errorf("form %d was not answered when the connection dropped", i)
		}
	}
	if m.form != nil || len(m.formQ) != 0 || m.perm != nil {
		t.Fatalf("questions left open after the drop: form %v, %d queued, perm %v", m.form, len(m.formQ), m.perm)
	}
	if got := <-perm; got != "" {
		t.Errorf("the permission question answered %q; want cancelled", got)
	}
	m.Update(sessionMsg{id: "s1", loaded: true, rejoin: true})
	third := ask("Third")
	if m.form == nil || m.form.req.Message != "Third" {
		t.Fatalf("a form after the re-attach did not open: %+v", m.form)
	}
	m.closeForm(acp.CreateElicitationResponse{Action: "decline"})
	if got := <-third; got.Action != "decline" {
		t.Errorf("the form after the re-attach answered %q", got.Action)
	}
}

// Attached to a daemon's session, another client's prompt arrives live as
// user chunks (the TUI's own is never sent back): it is printed once, and
// a re-attach's replay of it is not printed again.
func TestAnotherClientsPromptIsPrintedOnce(t *testing.T) {
	m := connectedModel()
	m.feed(t, acp.ContentChunk{SessionUpdate: "user_message_chunk", Content: acp.TextBlock("from the dashboard"), MessageID: "u1"})
	m.feed(t, msgChunk("m1", "An answer.\n"))
	before := m.printed()
	m.rejoining = true
	m.shown.startReplay()
	m.feed(t, acp.ContentChunk{SessionUpdate: "user_message_chunk", Content: acp.TextBlock("from the dashboard"), MessageID: "u1"})
	m.feed(t, msgChunk("m1", "An answer.\n"))
	m.Update(sessionMsg{id: "s1", loaded: true, rejoin: true})
	m.settle()
	all := strings.Join(append(before, m.printed()...), "\n")
	for _, want := range []string{"from the dashboard", "An answer."} {
		if n := strings.Count(all, want); n != 1 {
			t.Errorf("%q is printed %d times:\n%s", want, n, all)
		}
	}
}

func userChunk(id, text string) acp.ContentChunk {
	return acp.ContentChunk{SessionUpdate: "user_message_chunk", Content: acp.TextBlock(text), MessageID: id}
}

// The user messages of a re-attach's replay: the screen's own prompts
// (answered, refused, or cut off by the drop) and another client's prompt
// that came live are not printed again; another client's prompt made
// while the screen was cut off is printed, above its answer, even when
// its text is that of a prompt of the screen's the agent refused. A second
// re-attach prints nothing again.
func TestRejoinReplayShowsAPromptMadeWhileOffline(t *testing.T) {
	m := connectedModel()
	m.prompt("mine, answered")
	m.feed(t, msgChunk("m1", "Answer one.\n"))
	m.Update(promptDoneMsg{stop: acp.StopEndTurn, text: "mine, answered"})
	m.prompt("theirs, offline") // refused: not recorded, so not in the replay
	m.Update(promptDoneMsg{err: acp.InvalidParams("A prompt turn is already running in this session", ""), text: "theirs, offline"})
	m.feed(t, userChunk("u2", "theirs, live"))
	m.feed(t, msgChunk("m2", "Answer two.\n"))
	m.prompt("mine, in flight")
	m.feed(t, msgChunk("m3", "Half"))
	m.Update(agentGoneMsg{ag: m.ag}) // the drop: no answer to the prompt in flight
	before := m.printed()

	replay := func() {
		m.rejoining = true
		m.shown.startReplay()
		m.feed(t, userChunk("u1", "mine, answered"))
		m.feed(t, msgChunk("m1", "Answer one.\n"))
		m.feed(t, userChunk("u2", "theirs, live"))
		m.feed(t, msgChunk("m2", "Answer two.\n"))
		m.feed(t, userChunk("u3", "mine, in flight"))
		m.feed(t, msgChunk("m3", "Half and the rest.\n"))
		m.feed(t, userChunk("u4", "theirs, offline"))
		m.feed(t, msgChunk("m4", "Answer four.\n"))
		if m.printing != 0 || m.printCmd() != nil {
			t.Errorf("the replay's lines are printed before the load answered (%d lines)", m.printing)
		}
		m.Update(sessionMsg{id: "s1", loaded: true, rejoin: true})
		m.settle()
	}
	replay()
	all := strings.Join(append(before, m.printed()...), "\n")
	for _, want := range []string{"mine, answered", "Answer one.", "theirs, live", "Answer two.", "mine, in flight",
		"Half and the rest.", "Answer four."} {
		if n := strings.Count(all, want); n != 1 {
			t.Errorf("%q is printed %d times", want, n)
		}
	}
	// Twice: the screen's refused prompt, then the other client's.
	if n := strings.Count(all, "theirs, offline"); n != 2 {
		t.Errorf("%q is printed %d times; want 2", "theirs, offline", n)
	}
	if r, q, a := strings.Index(all, "reconnected"), strings.LastIndex(all, "theirs, offline"), strings.Index(all, "Answer four."); r < 0 || q < r || a < q {
		t.Errorf("want the reconnection told, then the prompt made while offline, then its answer")
	}
	if t.Failed() {
		t.Logf("printed:\n%s", all)
	}

	m.Update(agentGoneMsg{ag: m.ag})
	m.printed()
	replay()
	for _, l := range m.printed() {
		if l != "" && !strings.Contains(l, "reconnected") {
			t.Errorf("a second re-attach printed %q again", l)
		}
	}
}
