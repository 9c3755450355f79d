package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// toolFailures are the texts of failed tool_call updates tagged with member.
func toolFailures(ups []testkit.Update, member string) []string {
	var out []string
	for _, u := range ups {
		if memberOf(u) == member && u.Status == "failed" {
			for _, c := range u.ToolContent {
				out = append(out, c.Content.Text)
			}
		}
	}
	return out
}

// A sub-agent tree grows to the profile's max_depth (default 2), or
// --max-depth's; beyond it the task tool is not offered, so a call to it
// fails as an unknown tool.
func TestSubagentDepthLimit(t *testing.T) {
	deepest := childModel(t, textResponse("c3 done", 1, 1))
	grandchild := childModel(t,
		map[string]any{"parts": []any{taskCall("g1", "c3", "go deeper", "deeper", deepest)}},
		textResponse("c2 done", 1, 1))
	child := childModel(t,
		map[string]any{"parts": []any{taskCall("c1", "c2", "go deeper", "deeper", grandchild)}},
		textResponse("c1 done", 1, 1))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{taskCall("t1", "c1", "go deep", "deep", child)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "root done"}}},
	}}
	run := func(args ...string) []testkit.Update {
		s := startCorvid(t, parent, testkit.Options{}, args...)
		sid := s.ready(t, testkit.Zed())
		if stop, rerr := s.Prompt(s.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
			t.Fatalf("prompt: %q %v", stop, rerr)
		}
		return s.Updates(sid)
	}

	ups := run()
	var c2Depth any
	var c2Parent string
	for _, u := range ups {
		if memberOf(u) == "c2" {
			sub, _ := meta(u)["corvid.dev/subagent"].(map[string]any)
			c2Depth = sub["depth"]
			c2Parent, _ = sub["parentToolCallId"].(string)
		}
	}
	if c2Depth != float64(2) || !strings.HasSuffix(c2Parent, "/c1") {
		t.Errorf("default depth: c2 tagged depth %v, parentToolCallId %q; want 2 and c1's call (prefixed)", c2Depth, c2Parent)
	}
	if f := toolFailures(ups, "c2"); len(f) != 1 || !strings.Contains(f[0], `unknown tool "task"`) {
		t.Errorf("default depth 2: c2 (depth 2) task call failures %q, want unknown tool \"task\"", f)
	}
	for _, u := range ups {
		if memberOf(u) == "c3" {
			t.Fatalf("a depth-3 sub-agent ran: %s", u.Raw)
		}
	}

	ups = run("--max-depth", "1")
	if f := toolFailures(ups, "c1"); len(f) != 1 || !strings.Contains(f[0], `unknown tool "task"`) {
		t.Errorf("--max-depth 1: c1 task call failures %q, want unknown tool \"task\"", f)
	}
	for _, u := range ups {
		if memberOf(u) == "c2" {
			t.Fatalf("--max-depth 1: a depth-2 sub-agent ran: %s", u.Raw)
		}
	}
}

// session/cancel reaches the children: both slow children stop, the prompt
// answers cancelled, the task calls fail and the members are cancelled.
func TestSubagentCancelReachesChildren(t *testing.T) {
	slow := func() string {
		return childModel(t, map[string]any{"chunkSize": 1, "delayMs": 50, "parts": []any{map[string]any{"type": "text", "text": "x", "repeat": 2000}}})
	}
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{taskCall("t1", "a", "slow a", "work", slow()), taskCall("t2", "b", "slow b", "work", slow())}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "not reached"}}},
	}}
	s := startCorvid(t, parent, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "go"))
	seen := map[string]bool{}
	if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		if u.SessionUpdate == "agent_message_chunk" {
			seen[memberOf(u)] = true
		}
		return seen["a"] && seen["b"]
	}); err != nil {
		t.Fatalf("both children never streamed: %v", err)
	}
	cancelled := time.Now()
	s.Cancel(sid)
	raw, rerr := p.Wait(s.ctx)
	t.Logf("session/cancel → prompt response with two running sub-agents: %v (budget 100 ms, measured in bench, not asserted)", time.Since(cancelled))
	if rerr != nil || !strings.Contains(string(raw), `"cancelled"`) {
		t.Fatalf("prompt after cancel: %s %v, want stopReason cancelled", raw, rerr)
	}
	ups := s.Updates(sid)
	failed := map[string]bool{}
	for _, u := range ups {
		if u.SessionUpdate == "tool_call_update" && memberOf(u) == "" && u.Status == "failed" {
			failed[u.ToolCallID] = true
		}
	}
	if !failed["t1"] || !failed["t2"] {
		t.Errorf("task calls failed: %v, want t1 and t2", failed)
	}
	tus := teamUpdates(ups)
	ms := membersByName(tus[len(tus)-1])
	if ms["a"]["status"] != "cancelled" || ms["b"]["status"] != "cancelled" {
		t.Errorf("members after cancel: %v, want both cancelled", ms)
	}
	if strings.Contains(testkit.TextOf(ups, "agent_message_chunk"), "not reached") {
		t.Error("the parent went on after the cancel")
	}
}

// A team made with the team tool, a member's task, then session/load in a
// new process: the replay holds the member's tagged frames and the task
// call with its answer, and ends (C39) with the team's current status.
func TestSubagentTeamIsReplayedAndPushedAfterLoad(t *testing.T) {
	home := t.TempDir()
	alice := childModel(t, textResponse("alice's review", 5, 2))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "tm", "name": "team", "input": map[string]any{
			"action": "create", "teamName": "crew", "members": []any{map[string]any{"name": "alice", "description": "reviews code"}, map[string]any{"name": "bob", "description": "tests"}}}}}},
		map[string]any{"parts": []any{taskCall("t1", "alice", "review", "Review it", alice)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "reviewed"}}},
	}}
	opts := testkit.Options{Env: []string{"CORVID_HOME=" + home}}
	s := startCorvid(t, parent, opts)
	opts.Dir = s.workspace
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	tus := teamUpdates(s.Updates(sid))
	if len(tus) < 2 || tus[0]["type"] != "team_created" || tus[0]["teamName"] != "crew" {
		t.Fatalf("team updates %v: want team_created crew first", tus)
	}
	if ms := membersByName(tus[1]); tus[1]["isAutoTeam"] != false || ms["alice"]["status"] != "idle" || ms["bob"]["description"] != "tests" {
		t.Errorf("status after create: %v", tus[1])
	}
	if code, _ := s.Close(); code != 0 {
		t.Fatalf("exit %d", code)
	}

	s2 := startCorvid(t, parent, opts)
	if _, rerr := s2.Initialize(s2.ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	p := s2.CallAsync("session/load", map[string]any{"sessionId": sid, "cwd": s.workspace, "mcpServers": []any{}})
	if _, rerr := p.Wait(s2.ctx); rerr != nil {
		t.Fatalf("session/load: %v", rerr)
	}
	// Everything but the commands (pushed after the response) is the replay.
	var replay []testkit.Update
	for _, u := range s2.Updates(sid) {
		if u.SessionUpdate != "available_commands_update" {
			replay = append(replay, u)
		}
	}
	var aliceText string
	var answered bool
	lastTeam := -1
	for i, u := range replay {
		if memberOf(u) == "alice" && u.SessionUpdate == "agent_message_chunk" {
			aliceText += u.Content.Text
			if sub, _ := meta(u)["corvid.dev/subagent"].(map[string]any); sub["parentToolCallId"] != "t1" {
				t.Errorf("replayed alice chunk corvid.dev/subagent %v", sub)
			}
		}
		if u.ToolCallID == "t1" && u.Status == "completed" && len(u.ToolContent) == 1 && u.ToolContent[0].Content.Text == "alice's review" {
			answered = true
		}
		if _, ok := meta(u)["codebuddy.ai/teamUpdate"]; ok {
			lastTeam = i
		}
	}
	if aliceText != "alice's review" || !answered {
		t.Errorf("replay: alice's tagged text %q, task answer replayed %v", aliceText, answered)
	}
	if lastTeam != len(replay)-1 || lastTeam < 0 {
		t.Fatalf("the team status is not the last update before the load response (at %d of %d)", lastTeam, len(replay))
	}
	tu := meta(replay[lastTeam])["codebuddy.ai/teamUpdate"].(map[string]any)
	ms := membersByName(tu)
	if tu["type"] != "member_status_change" || tu["teamName"] != "crew" || ms["alice"]["status"] != "completed" || ms["bob"]["status"] != "idle" {
		t.Errorf("team status after load: %v", tu)
	}
	if u, _ := ms["alice"]["tokenUsage"].(map[string]any); u["inputTokens"] != float64(5) || u["outputTokens"] != float64(2) {
		t.Errorf("alice's tokenUsage after load: %v", ms["alice"]["tokenUsage"])
	}
}

// In print mode a sub-agent's text is not part of the answer on stdout.
func TestSubagentTextStaysOutOfPrintOutput(t *testing.T) {
	child := childModel(t, textResponse("child text", 1, 1))
	p := newPrintEnv(t, map[string]any{"responses": []any{
		map[string]any{"parts": []any{taskCall("t1", "", "look", "look around", child)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "parent answer"}}},
	}})
	out, errOut, code := p.run("", "run", "-m", "script:"+p.script, "-p", "go")
	if code != 0 || out != "parent answer\n" {
		t.Errorf("exit %d, stdout %q (want only the parent's answer)\nstderr: %s", code, out, errOut)
	}
}

// A task naming an agent profile runs the sub-agent with the profile's
// model (here a script of its own); an unknown profile, or a path (the
// model chooses it), fails the task call with the reason, and the member
// is failed.
func TestSubagentRunsWithAProfile(t *testing.T) {
	child := childModel(t, textResponse("the profile's answer", 1, 1))
	home := t.TempDir()
	prof := filepath.Join(home, "config", "agents", "reviewer.toml") // CORVID_HOME/config/agents
	if err := os.MkdirAll(filepath.Dir(prof), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prof, []byte("name = \"reviewer\"\ndescription = \"Reviews.\"\nmodel = \""+child+"\"\ninstructions = \"Review carefully.\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withProfile := func(id, profile string) map[string]any {
		return map[string]any{"type": "tool_call", "id": id, "name": "task", "input": map[string]any{"description": "review", "prompt": "review it", "profile": profile}}
	}
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{withProfile("t1", "reviewer")}},
		map[string]any{"parts": []any{withProfile("t2", "no-such-profile")}},
		map[string]any{"parts": []any{withProfile("t3", prof)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "done"}}},
	}}
	s := startCorvid(t, parent, testkit.Options{Env: []string{"CORVID_HOME=" + home}})
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	var answered, refused, pathRefused bool
	for _, u := range s.Updates(sid) {
		if u.SessionUpdate != "tool_call_update" || len(u.ToolContent) == 0 {
			continue
		}
		text := u.ToolContent[0].Content.Text
		answered = answered || (u.ToolCallID == "t1" && u.Status == "completed" && text == "the profile's answer")
		refused = refused || (u.ToolCallID == "t2" && u.Status == "failed" && strings.Contains(text, `profile "no-such-profile"`))
		pathRefused = pathRefused || (u.ToolCallID == "t3" && u.Status == "failed" && strings.Contains(text, "not a path"))
	}
	if !answered || !refused || !pathRefused {
		t.Errorf("profile task answered with the profile's model: %v; unknown profile refused: %v; a path refused: %v", answered, refused, pathRefused)
	}
}

// corvid killed while a sub-agent runs: a new process loads the session,
// replays the member's frames the editor saw and the task call as failed
// (interrupted), and reports the member interrupted, never silently lost.
func TestSubagentKilledMidTaskIsInterruptedAfterLoad(t *testing.T) {
	home := t.TempDir()
	slow := childModel(t, map[string]any{"chunkSize": 1, "delayMs": 20, "parts": []any{map[string]any{"type": "text", "text": "y", "repeat": 100000}}})
	parent := map[string]any{"responses": []any{map[string]any{"parts": []any{taskCall("t1", "slowpoke", "never ends", "stream", slow)}}}}
	opts := testkit.Options{Env: []string{"CORVID_HOME=" + home}}
	s := startCorvid(t, parent, opts)
	opts.Dir = s.workspace
	sid := s.ready(t, testkit.Zed())
	s.CallAsync("session/prompt", testkit.TextPrompt(sid, "go"))
	if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		return u.SessionUpdate == "agent_message_chunk" && memberOf(u) == "slowpoke"
	}); err != nil {
		t.Fatalf("the sub-agent never streamed: %v", err)
	}
	s.Kill()

	s2 := startCorvid(t, parent, opts)
	if _, rerr := s2.Initialize(s2.ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	s2.MustCall(s2.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": s.workspace, "mcpServers": []any{}}, nil)
	ups := s2.Updates(sid)
	var streamed, interrupted bool
	for _, u := range ups {
		streamed = streamed || (memberOf(u) == "slowpoke" && u.SessionUpdate == "agent_message_chunk" && strings.HasPrefix(u.Content.Text, "y"))
		interrupted = interrupted || (u.ToolCallID == "t1" && u.Status == "failed")
	}
	if !streamed || !interrupted {
		t.Errorf("after load: the member's streamed text replayed %v, the task call failed (interrupted) %v", streamed, interrupted)
	}
	tus := teamUpdates(ups)
	if len(tus) != 1 {
		t.Fatalf("team updates after load: %v, want the one current status", tus)
	}
	if m := membersByName(tus[0])["slowpoke"]; m["status"] != "interrupted" || m["taskId"] != "t1" {
		t.Errorf("member after load: %v, want interrupted, task t1", m)
	}
}
