package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Sub-agents (the task tool) and agent teams, through the built binary. Each
// child plays a script of its own: the parent's task call names it as the
// child's model ("script:FILE", a model of the session's provider).

// taskCall is a script part: a task tool call.
func taskCall(id, name, description, prompt, model string) map[string]any {
	in := map[string]any{"description": description, "prompt": prompt}
	if name != "" {
		in["name"] = name
	}
	if model != "" {
		in["model"] = model
	}
	return map[string]any{"type": "tool_call", "id": id, "name": "task", "input": in}
}

// childModel writes a child's script and returns its model id.
func childModel(t *testing.T, responses ...any) string {
	t.Helper()
	return "script:" + testkit.WriteScript(t, map[string]any{"responses": responses})
}

func textResponse(text string, in, out int) map[string]any {
	return map[string]any{"parts": []any{map[string]any{"type": "text", "text": text}},
		"usage": map[string]any{"inputTokens": in, "outputTokens": out}}
}

// meta decodes an update's _meta.
func meta(u testkit.Update) map[string]any {
	var v struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(u.Raw, &v)
	return v.Meta
}

// memberOf is the member name an update is tagged with ("" = none).
func memberOf(u testkit.Update) string {
	name, _ := meta(u)["codebuddy.ai/memberEvent"].(string)
	return name
}

// teamUpdates are the codebuddy.ai/teamUpdate payloads among updates.
func teamUpdates(updates []testkit.Update) []map[string]any {
	var out []map[string]any
	for _, u := range updates {
		if tu, ok := meta(u)["codebuddy.ai/teamUpdate"].(map[string]any); ok && u.SessionUpdate == "session_info_update" {
			out = append(out, tu)
		}
	}
	return out
}

// membersByName indexes a member_status_change's members.
func membersByName(tu map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	ms, _ := tu["members"].([]any)
	for _, m := range ms {
		mm, _ := m.(map[string]any)
		name, _ := mm["name"].(string)
		out[name] = mm
	}
	return out
}

// The parent delegates to two children in one response. The writer's write
// asks through the parent session's session/request_permission, titled with
// its name; that question is held until the reader's task has completed, so
// the turn can only end if the two ran in parallel. Every child frame is a
// standard update of the parent session, tagged with the member; the
// parent's task calls show progress and end with the children's answers;
// usage rolls up; the team's status is pushed.
func TestSubagentsRunInParallelAndAskThroughTheParent(t *testing.T) {
	writer := childModel(t,
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "w1", "name": "write", "input": map[string]any{"path": "notes.txt", "content": "hello\n"}}},
			"usage": map[string]any{"inputTokens": 10, "outputTokens": 4}},
		textResponse("wrote notes.txt", 11, 5))
	reader := childModel(t, textResponse("the reader's answer", 7, 3))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{
			taskCall("t1", "writer", "write the notes", "Write hello to notes.txt", writer),
			taskCall("t2", "reader", "answer a question", "Say something", reader),
		}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "both done"}}},
	}}
	readerDone := make(chan struct{})
	opts := testkit.Options{Permission: func(ctx context.Context, req testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
		select {
		case <-readerDone:
			return testkit.PermissionOutcome{OptionID: "allow_once"}, nil
		case <-ctx.Done():
			return testkit.PermissionOutcome{Cancelled: true}, nil
		}
	}}
	s := startCorvid(t, parent, opts)
	sid := s.ready(t, testkit.Zed())
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "delegate"))

	isReaderAnswer := func(u testkit.Update) bool {
		return u.SessionUpdate == "tool_call_update" && u.ToolCallID == "t2" && u.Status == "completed"
	}
	if _, err := s.WaitUpdate(s.ctx, isReaderAnswer); err != nil {
		t.Fatalf("the reader's task never completed while the writer's question was open (not run in parallel?): %v\n%s", err, s.TranscriptString())
	}
	close(readerDone)
	raw, rerr := p.Wait(s.ctx)
	if rerr != nil {
		t.Fatalf("prompt: %v", rerr)
	}
	if !strings.Contains(string(raw), `"end_turn"`) {
		t.Fatalf("prompt result %s, want end_turn", raw)
	}
	ups := s.Updates(sid)

	// The question: one, from the writer, through the parent session.
	perms := s.Permissions()
	if len(perms) != 1 {
		t.Fatalf("%d permission requests, want 1 (the writer's write)", len(perms))
	}
	q := perms[0].Request
	if q.SessionID != sid || !strings.HasPrefix(q.Title, "[writer] ") || q.Kind != "edit" {
		t.Errorf("permission request session %q title %q kind %q: want the parent session, a title starting [writer], kind edit", q.SessionID, q.Title, q.Kind)
	}
	var qtc struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(q.ToolCall, &qtc)
	if qtc.Meta["codebuddy.ai/memberEvent"] != "writer" {
		t.Errorf("permission request toolCall _meta = %v, want memberEvent writer", qtc.Meta)
	}
	if b, err := os.ReadFile(filepath.Join(s.workspace, "notes.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("notes.txt = %q, %v; want the writer's hello", b, err)
	}

	// Tagged child frames: text, the writer's tool call (its id unique in
	// the session), each with corvid.dev/subagent naming the task call.
	var readerText, writerText string
	var writerTool *testkit.Update
	for i, u := range ups {
		switch memberOf(u) {
		case "reader":
			if u.SessionUpdate == "agent_message_chunk" {
				readerText += u.Content.Text
			}
			sub, _ := meta(u)["corvid.dev/subagent"].(map[string]any)
			if sub["name"] != "reader" || sub["parentToolCallId"] != "t2" || sub["depth"] != float64(1) || sub["id"] == "" {
				t.Errorf("reader frame corvid.dev/subagent = %v, want name reader, parentToolCallId t2, depth 1, an id", sub)
			}
		case "writer":
			if u.SessionUpdate == "agent_message_chunk" {
				writerText += u.Content.Text
			}
			if u.SessionUpdate == "tool_call" {
				writerTool = &ups[i]
			}
		}
	}
	if readerText != "the reader's answer" || writerText != "wrote notes.txt" {
		t.Errorf("tagged text: reader %q, writer %q", readerText, writerText)
	}
	if writerTool == nil || writerTool.ToolCallID == "w1" || !strings.HasSuffix(writerTool.ToolCallID, "/w1") {
		t.Errorf("the writer's tool_call: %+v; want a tagged tool_call whose id is prefixed with the child's", writerTool)
	} else if writerTool.ToolCallID != q.ToolCallID {
		t.Errorf("permission asked about %q, the tool_call was %q", q.ToolCallID, writerTool.ToolCallID)
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); !strings.HasSuffix(got, "both done") {
		t.Errorf("message text %q, want the parent's answer last", got)
	}

	// The parent's task calls: progress, then the answer.
	var progress, writerAnswer, readerAnswer bool
	for _, u := range ups {
		if u.SessionUpdate != "tool_call_update" || memberOf(u) != "" {
			continue
		}
		text := ""
		for _, c := range u.ToolContent {
			text += c.Content.Text
		}
		switch {
		case u.ToolCallID == "t1" && u.Status == "" && strings.Contains(text, "Write notes.txt"):
			progress = true
		case u.ToolCallID == "t1" && u.Status == "completed" && text == "wrote notes.txt":
			writerAnswer = true
		case u.ToolCallID == "t2" && u.Status == "completed" && text == "the reader's answer":
			readerAnswer = true
		}
	}
	if !progress || !writerAnswer || !readerAnswer {
		t.Errorf("parent task calls: progress %v, writer's answer %v, reader's answer %v", progress, writerAnswer, readerAnswer)
	}

	// Usage rolls up: the last usage_update totals the children's tokens.
	var rollup map[string]any
	for _, u := range testkit.OfKind(ups, "usage_update") {
		if memberOf(u) != "" {
			t.Errorf("a child's usage_update reached the editor: %s", u.Raw)
		}
		if r, ok := meta(u)["corvid.dev/subagentUsage"].(map[string]any); ok {
			rollup = r
		}
	}
	if rollup["inputTokens"] != float64(28) || rollup["outputTokens"] != float64(12) {
		t.Errorf("rolled-up sub-agent usage %v, want 28 in, 12 out", rollup)
	}

	// The team: created automatically, each member's final status.
	tus := teamUpdates(ups)
	if len(tus) == 0 || tus[0]["type"] != "team_created" || tus[0]["teamName"] != "subagents" {
		t.Fatalf("team updates %v: want team_created subagents first", tus)
	}
	last := tus[len(tus)-1]
	ms := membersByName(last)
	if last["type"] != "member_status_change" || last["isAutoTeam"] != true || len(ms) != 2 {
		t.Fatalf("last team update %v", last)
	}
	w, r := ms["writer"], ms["reader"]
	if w["status"] != "completed" || r["status"] != "completed" || w["toolCallCount"] != float64(1) || r["toolCallCount"] != float64(0) ||
		w["taskId"] != "t1" || r["taskId"] != "t2" || w["sessionId"] == "" || w["color"] == "" || w["description"] != "write the notes" {
		t.Errorf("members %v", ms)
	}
	if tu, _ := w["tokenUsage"].(map[string]any); tu["inputTokens"] != float64(21) || tu["outputTokens"] != float64(9) {
		t.Errorf("writer tokenUsage %v, want 21 in, 9 out", w["tokenUsage"])
	}
}
