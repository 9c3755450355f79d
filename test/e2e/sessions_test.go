package e2e

// Sessions never get lost: what one corvid process streamed, a second process
// started on the same store replays, remembers and continues. Every test here
// runs two or more corvid processes that share one CORVID_HOME (and so one
// sessions.db); testkit gives each process its own HOME otherwise.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corvidstore "github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// sharedHome is a CORVID_HOME shared by the corvid processes of one test, and the
// workspace their sessions use.
type sharedHome struct {
	home      string // CORVID_HOME
	workspace string
	script    string // script file for -m script:FILE
}

// newSharedHome writes script (a script-format value) and returns a fresh store.
func newSharedHome(t *testing.T, script any) *sharedHome {
	t.Helper()
	st := &sharedHome{home: filepath.Join(t.TempDir(), "corvid-home"), workspace: t.TempDir()}
	st.script = testkit.WriteScript(t, script)
	return st
}

// dbPath is the session database every process of the store opens.
func (st *sharedHome) dbPath() string { return filepath.Join(st.home, "sessions.db") }

// start spawns `corvid acp -m script:FILE extra...` on the store and
// initializes it as h.
func (st *sharedHome) start(t *testing.T, h testkit.Host, extra ...string) *session {
	t.Helper()
	return st.startArgs(t, h, nil, append([]string{"acp", "-m", "script:" + st.script}, extra...)...)
}

// startArgs spawns corvid with args and extra environment on the store.
func (st *sharedHome) startArgs(t *testing.T, h testkit.Host, env []string, args ...string) *session {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	e := testkit.Start(t, bin, testkit.Options{
		Args: args,
		Dir:  st.workspace,
		Env:  append([]string{"CORVID_HOME=" + st.home}, env...),
	})
	s := &session{Editor: e, ctx: ctx, workspace: st.workspace}
	if _, rerr := s.Initialize(ctx, h); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	return s
}

// load calls session/load and returns the session's replayed updates. It
// checks the response is an object and that no history update of the
// session came after it.
func (s *session) load(t *testing.T, sid string) []testkit.Update {
	t.Helper()
	before := len(s.Updates(sid))
	p := s.CallAsync("session/load", map[string]any{"sessionId": sid, "cwd": s.workspace, "mcpServers": []any{}})
	res, rerr := p.Wait(s.ctx)
	if rerr != nil {
		t.Fatalf("session/load %s: %v", sid, rerr)
	}
	var obj map[string]any
	if err := json.Unmarshal(res, &obj); err != nil || obj == nil {
		t.Errorf("session/load result %s, want a JSON object", res)
	}
	// A round trip, so that anything written after the response is read too.
	s.MustCall(s.ctx, "session/list", map[string]any{"cwd": s.workspace}, nil)
	var replay []testkit.Update
	for _, u := range s.Updates(sid)[before:] {
		switch {
		case u.Seq < p.Seq():
			replay = append(replay, u)
		case testkit.IsHistory(u.SessionUpdate):
			t.Errorf("replayed %s (line %d) arrived after the load response (line %d)", u.SessionUpdate, u.Seq, p.Seq())
		}
	}
	return replay
}

// turn prompts sid with text, requires the given stop reason and returns the
// updates the turn streamed.
func (s *session) turn(t *testing.T, sid, text, wantStop string) []testkit.Update {
	t.Helper()
	before := len(s.Updates(sid))
	stop, rerr := s.Prompt(s.ctx, sid, text)
	if rerr != nil || stop != wantStop {
		t.Fatalf("prompt %q: stop %q, error %v; want %s", text, stop, rerr, wantStop)
	}
	return s.Updates(sid)[before:]
}

// toolSummary is a tool call as a reader sees it at the end.
type toolSummary struct {
	ID, Title, Kind, Status string
	Text                    string // the text content of its final state
}

type planEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

// transcript is a session's history normalised for comparison: the live
// stream (many small chunks, every tool state) and the replay (merged chunks,
// each tool call's final state) must give the same transcript.
type transcript struct {
	User, Agent, Thought string
	Tools                []toolSummary
	Plans                [][]planEntry
}

func normalise(ups []testkit.Update) transcript {
	tr := transcript{
		User:    testkit.TextOf(ups, "user_message_chunk"),
		Agent:   testkit.TextOf(ups, "agent_message_chunk"),
		Thought: testkit.TextOf(ups, "agent_thought_chunk"),
	}
	index := map[string]int{}
	for _, u := range ups {
		switch u.SessionUpdate {
		case "tool_call":
			index[u.ToolCallID] = len(tr.Tools)
			tr.Tools = append(tr.Tools, toolSummary{ID: u.ToolCallID, Title: u.Title, Kind: u.Kind, Status: u.Status})
			fallthrough
		case "tool_call_update":
			i, ok := index[u.ToolCallID]
			if !ok {
				continue
			}
			tc := &tr.Tools[i]
			if u.Status != "" {
				tc.Status = u.Status
			}
			if u.Title != "" {
				tc.Title = u.Title
			}
			if u.ToolContent != nil {
				tc.Text = ""
				for _, c := range u.ToolContent {
					if c.Type == "content" && c.Content.Type == "text" {
						tc.Text += c.Content.Text
					}
				}
			}
		case "plan":
			var p struct {
				Entries []planEntry `json:"entries"`
			}
			_ = json.Unmarshal(u.Raw, &p)
			tr.Plans = append(tr.Plans, p.Entries)
		}
	}
	return tr
}

// updateKinds lists the distinct update kinds in order of first appearance.
func updateKinds(ups []testkit.Update) []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range ups {
		if !seen[u.SessionUpdate] {
			seen[u.SessionUpdate] = true
			out = append(out, u.SessionUpdate)
		}
	}
	return out
}

// richScript: turn 1 thinks, reads a file and writes a plan (two tool calls
// in one model response), then answers; turn 2 answers from memory.
func richScript(file string) map[string]any {
	return map[string]any{"responses": []any{
		map[string]any{"chunkSize": 4, "parts": []any{
			map[string]any{"type": "thinking", "text": "I should read the notes and plan the work."},
			map[string]any{"type": "tool_call", "id": "call_read", "name": "read", "input": map[string]any{"path": file}},
			map[string]any{"type": "tool_call", "id": "call_plan", "name": "todo", "input": map[string]any{"todos": []any{
				map[string]any{"content": "Read the notes", "status": "completed", "priority": "high"},
				map[string]any{"content": "Summarise them", "status": "in_progress"},
				map[string]any{"content": "Report back", "status": "pending", "priority": "low"},
			}}},
		}},
		map[string]any{"chunkSize": 5, "parts": []any{map[string]any{"type": "text", "text": "The notes say alpha and beta; the plan is recorded."}}},
		map[string]any{"chunkSize": 5, "parts": []any{map[string]any{"type": "text", "text": "Second answer, after the load."}}},
	}}
}

func TestLoadInANewProcessReplaysWhatTheFirstStreamed(t *testing.T) {
	st := newSharedHome(t, nil)
	file := filepath.Join(st.workspace, "notes.txt")
	if err := os.WriteFile(file, []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st.script = testkit.WriteScript(t, richScript(file))

	a := st.start(t, testkit.Minimal())
	sid := a.NewSession(a.ctx, st.workspace)
	const prompt = "Read notes.txt and make a plan."
	live := a.turn(t, sid, prompt, "end_turn")
	if code, _ := a.Close(); code != 0 {
		t.Errorf("process A exited %d", code)
	}
	want := normalise(live)
	want.User = prompt // the client shows its own prompt; corvid replays it
	if want.Thought == "" || want.Agent == "" || len(want.Tools) != 2 || len(want.Plans) != 1 {
		t.Fatalf("process A's turn is not what the script asks for: %+v", want)
	}

	b := st.start(t, testkit.Zed())
	replay := b.load(t, sid)
	got := normalise(replay)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replay differs from the live stream\n got: %+v\nwant: %+v", got, want)
	}
	for _, k := range []string{"user_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan", "agent_message_chunk"} {
		if len(testkit.OfKind(replay, k)) == 0 {
			t.Errorf("replay has no %s (kinds %v)", k, updateKinds(replay))
		}
	}
	if ks := updateKinds(replay); len(ks) == 0 || ks[0] != "user_message_chunk" {
		t.Errorf("replay starts with %v, want the user's prompt first", ks)
	}
	for _, tc := range got.Tools {
		if tc.Status != "completed" {
			t.Errorf("replayed tool call %s ends %q, want completed", tc.ID, tc.Status)
		}
	}
	if len(got.Plans) == 1 && (len(got.Plans[0]) != 3 || got.Plans[0][1].Content != "Summarise them" || got.Plans[0][1].Priority != "medium") {
		t.Errorf("replayed plan %+v", got.Plans[0])
	}

	// Full memory: the script plays response N for the N-th model call of
	// the conversation, so a restored context (two assistant messages)
	// plays response 2; a lost one would play response 0 again.
	next := b.turn(t, sid, "And now?", "end_turn")
	if txt := testkit.TextOf(next, "agent_message_chunk"); txt != "Second answer, after the load." {
		t.Errorf("turn after load answered %q: the model context was not restored", txt)
	}
	if n := len(testkit.OfKind(next, "tool_call")); n != 0 {
		t.Errorf("turn after load ran %d tool calls: the script restarted from response 0", n)
	}
}

// With a real provider (the fake Anthropic API), the request after a load
// in a new process carries the whole earlier conversation: the user's text,
// the assistant's text and tool call, and the tool's result.
func TestLoadRestoresTheAnthropicRequestContext(t *testing.T) {
	api := fakeanthropic.New(t)
	st := newSharedHome(t, nil)
	file := filepath.Join(st.workspace, "secret.txt")
	if err := os.WriteFile(file, []byte("the password is heliotrope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]string{"path": file})
	api.Enqueue(
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{
			fakeanthropic.Text("Let me look at the file."),
			fakeanthropic.ToolUse("toolu_read_1", "read", string(input)),
		}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("The file names a flower.")}},
	)
	env := []string{"ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off"}
	args := []string{"acp", "-m", "anthropic:claude-sonnet-4-6"}

	a := st.startArgs(t, testkit.Minimal(), env, args...)
	sid := a.NewSession(a.ctx, st.workspace)
	a.turn(t, sid, "What is in secret.txt?", "end_turn")
	a.Close()

	b := st.startArgs(t, testkit.Minimal(), env, args...)
	b.load(t, sid)
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("Heliotrope.")}})
	next := b.turn(t, sid, "Which flower?", "end_turn")
	if txt := testkit.TextOf(next, "agent_message_chunk"); txt != "Heliotrope." {
		t.Errorf("turn after load answered %q", txt)
	}
	reqs := api.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the fake API got %d requests, want 3", len(reqs))
	}
	var userTexts, assistantTexts, toolResults []string
	toolUse := false
	for _, m := range reqs[2].Body.Messages {
		for _, c := range m.Content {
			switch {
			case c.Type == "text" && m.Role == "user":
				userTexts = append(userTexts, c.Text)
			case c.Type == "text" && m.Role == "assistant":
				assistantTexts = append(assistantTexts, c.Text)
			case c.Type == "tool_use" && c.ID == "toolu_read_1" && c.Name == "read":
				toolUse = true
			case c.Type == "tool_result" && c.ToolUseID == "toolu_read_1":
				toolResults = append(toolResults, c.ResultText())
			}
		}
	}
	joined := func(ss []string) string { return strings.Join(ss, " | ") }
	if u := joined(userTexts); !strings.Contains(u, "What is in secret.txt?") || !strings.HasSuffix(u, "Which flower?") {
		t.Errorf("user text in the request after load: %q", u)
	}
	if a := joined(assistantTexts); !strings.Contains(a, "Let me look at the file.") || !strings.Contains(a, "The file names a flower.") {
		t.Errorf("assistant text in the request after load: %q", a)
	}
	if !toolUse {
		t.Error("the request after load lacks the earlier read tool_use")
	}
	if r := joined(toolResults); !strings.Contains(r, "heliotrope") {
		t.Errorf("tool result in the request after load: %q, want the file's content", r)
	}
	if first, last := reqs[2].Body.Messages[0], reqs[2].Body.Messages[len(reqs[2].Body.Messages)-1]; first.Role != "user" || last.Role != "user" {
		t.Errorf("request after load runs from %s to %s, want user to user", first.Role, last.Role)
	}
}

func TestLoadResultIsAnObjectForAnEmptySession(t *testing.T) {
	st := newSharedHome(t, text("unused", 0))
	a := st.start(t, testkit.Minimal())
	sid := a.NewSession(a.ctx, st.workspace)
	a.Close()
	b := st.start(t, testkit.Minimal())
	res, rerr := b.Call(b.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}})
	if rerr != nil {
		t.Fatalf("load: %v", rerr)
	}
	if strings.TrimSpace(string(res)) == "null" || !strings.HasPrefix(strings.TrimSpace(string(res)), "{") {
		t.Errorf("session/load result %s, want an object", res)
	}
	if ups := testkit.History(b.Updates(sid)); len(ups) != 0 {
		t.Errorf("an empty session replayed %v", updateKinds(ups))
	}
}

func TestResumeSendsNoReplayAndKeepsMemory(t *testing.T) {
	st := newSharedHome(t, scriptFile(t, "resume-memory"))
	a := st.start(t, testkit.Minimal())
	sid := a.NewSession(a.ctx, st.workspace)
	a.turn(t, sid, "first question", "end_turn")
	a.Close()

	b := st.start(t, testkit.Minimal())
	p := b.CallAsync("session/resume", map[string]any{"sessionId": sid, "cwd": st.workspace})
	res, rerr := p.Wait(b.ctx)
	if rerr != nil {
		t.Fatalf("session/resume: %v", rerr)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(res)), "{") {
		t.Errorf("session/resume result %s, want an object", res)
	}
	b.MustCall(b.ctx, "session/list", map[string]any{}, nil) // read whatever followed the response
	for _, u := range b.Updates("") {
		if testkit.IsHistory(u.SessionUpdate) || u.SessionUpdate == "usage_update" || u.Seq < p.Seq() {
			t.Errorf("session/resume sent %s (line %d, response at line %d); it must not replay", u.SessionUpdate, u.Seq, p.Seq())
		}
	}
	next := b.turn(t, sid, "second question", "end_turn")
	if txt := testkit.TextOf(next, "agent_message_chunk"); txt != "second answer" {
		t.Errorf("turn after resume answered %q: the model context was not restored", txt)
	}
	for _, u := range next {
		if u.SessionUpdate == "user_message_chunk" || strings.Contains(string(u.Raw), "first answer") {
			t.Errorf("the turn after resume replayed history: %s", u.Raw)
		}
	}
}

func TestLoadOfUnknownSessionIsResourceNotFound(t *testing.T) {
	st := newSharedHome(t, text("x", 0))
	s := st.start(t, testkit.Minimal())
	_, rerr := s.Call(s.ctx, "session/load", map[string]any{"sessionId": "sess_never_was", "cwd": st.workspace, "mcpServers": []any{}})
	if rerr == nil || rerr.Code != testkit.CodeResourceNotFound || rerr.Message != "Session not found" {
		t.Errorf("load of an unknown session: %v, want -32002 \"Session not found\"", rerr)
	}
	_, rerr = s.Call(s.ctx, "session/resume", map[string]any{"sessionId": "sess_never_was", "cwd": st.workspace})
	if rerr == nil || rerr.Code != testkit.CodeResourceNotFound {
		t.Errorf("resume of an unknown session: %v, want -32002", rerr)
	}
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// slowCount is a long answer of distinct characters, streamed one per chunk.
func slowCount() string {
	var sb strings.Builder
	for i := range 400 {
		fmt.Fprintf(&sb, "%d,", i)
	}
	return sb.String()
}

// killMidStream starts a slow answer, kills corvid with SIGKILL right after
// the chunks-th chunk arrived, loads the session in a new process and returns
// the text streamed before the kill and the text replayed.
func killMidStream(t *testing.T, chunks int) (streamed, replayed string) {
	t.Helper()
	answer := slowCount()
	st := newSharedHome(t, map[string]any{"responses": []any{
		map[string]any{"chunkSize": 1, "delayMs": 3, "parts": []any{
			map[string]any{"type": "thinking", "text": "quick thought"},
			map[string]any{"type": "text", "text": answer}}},
	}})
	a := st.start(t, testkit.Minimal())
	sid := a.NewSession(a.ctx, st.workspace)
	a.CallAsync("session/prompt", testkit.TextPrompt(sid, "count slowly"))
	for range chunks {
		if _, err := a.WaitUpdate(a.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
			t.Fatal(err)
		}
	}
	a.Kill()
	streamed = testkit.TextOf(a.Updates(sid), "agent_message_chunk")
	if len(streamed) < chunks || len(streamed) >= len(answer) {
		t.Fatalf("streamed %d characters before the kill; the test wants a turn cut mid-stream", len(streamed))
	}

	b := st.start(t, testkit.Minimal())
	replay := b.load(t, sid)
	replayed = testkit.TextOf(replay, "agent_message_chunk")
	if !strings.HasPrefix(answer, replayed) {
		t.Errorf("replayed text %q is not a prefix of the answer", replayed)
	}
	if th := testkit.TextOf(replay, "agent_thought_chunk"); th != "quick thought" {
		t.Errorf("replayed thought %q, want the whole thought streamed before the text", th)
	}
	if u := testkit.TextOf(replay, "user_message_chunk"); u != "count slowly" {
		t.Errorf("replayed prompt %q", u)
	}
	return streamed, replayed
}

// ARCHITECTURE.md §7: the group commit means a kill -9 loses at most the last few
// milliseconds of a stream. At one chunk per 3 ms, 10 characters is 30 ms.
func TestKillDuringStreamingLosesAtMostTheLastFewMilliseconds(t *testing.T) {
	for _, chunks := range []int{20, 140} {
		t.Run(fmt.Sprint(chunks, "chunks"), func(t *testing.T) {
			streamed, replayed := killMidStream(t, chunks)
			n := commonPrefix(replayed, streamed)
			if n != len(replayed) && n != len(streamed) {
				t.Errorf("replay disagrees with the stream after %d characters", n)
			}
			if lost := len(streamed) - n; lost > 10 {
				t.Errorf("replay lost %d of %d streamed characters; the budget is the last few ms", lost, len(streamed))
			}
		})
	}
}

// ARCHITECTURE.md §3 "storage": events are appended as they happen, so a kill -9
// loses nothing that was already streamed: every chunk the client saw is in
// the replay.
func TestKillDuringStreamingLosesNoStreamedChunk(t *testing.T) {
	for _, chunks := range []int{20, 80, 140} {
		t.Run(fmt.Sprint(chunks, "chunks"), func(t *testing.T) {
			streamed, replayed := killMidStream(t, chunks)
			if !strings.HasPrefix(replayed, streamed) {
				n := commonPrefix(replayed, streamed)
				t.Errorf("replay lost streamed text: %d characters streamed, %d replayed, agreeing on the first %d (lost %q)",
					len(streamed), len(replayed), n, streamed[n:])
			}
		})
	}
}

// What the user saw streamed before a crash is part of the conversation: the
// model should know it had started answering (on a cancel the loop keeps
// the partial answer in the context for the same reason).
func TestKillDuringStreamingKeepsThePartialAnswerInTheContext(t *testing.T) {
	st := newSharedHome(t, scriptFile(t, "partial-answer"))
	a := st.start(t, testkit.Minimal())
	sid := a.NewSession(a.ctx, st.workspace)
	a.CallAsync("session/prompt", testkit.TextPrompt(sid, "say a lot"))
	if _, err := a.WaitUpdate(a.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatal(err)
	}
	waitStored(t, a.ctx, st.dbPath(), sid, func(kind string, _ []byte) bool { return kind == "agent_message_chunk" })
	a.Kill()

	b := st.start(t, testkit.Minimal())
	b.load(t, sid)
	next := b.turn(t, sid, "go on", "end_turn")
	if txt := testkit.TextOf(next, "agent_message_chunk"); txt != "I was cut off." {
		t.Errorf("turn after the crash answered %q: the context lost the partial answer", shorten(txt))
	}
}

// The contrast: a cancelled turn keeps its partial answer in the context,
// and a load in a new process restores it.
func TestCancelledPartialAnswerSurvivesALoad(t *testing.T) {
	st := newSharedHome(t, scriptFile(t, "partial-answer"))
	a := st.start(t, testkit.Minimal())
	sid := a.NewSession(a.ctx, st.workspace)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "say a lot"))
	if _, err := a.WaitUpdate(a.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatal(err)
	}
	a.Cancel(sid)
	if res, rerr := p.Wait(a.ctx); rerr != nil || !strings.Contains(string(res), "cancelled") {
		t.Fatalf("cancelled prompt: %s %v", res, rerr)
	}
	streamed := testkit.TextOf(a.Updates(sid), "agent_message_chunk")
	a.Close()

	b := st.start(t, testkit.Minimal())
	if got := testkit.TextOf(b.load(t, sid), "agent_message_chunk"); got != streamed {
		t.Errorf("replay of the cancelled turn %q, want the %d characters streamed", shorten(got), len(streamed))
	}
	next := b.turn(t, sid, "go on", "end_turn")
	if txt := testkit.TextOf(next, "agent_message_chunk"); txt != "I was cut off." {
		t.Errorf("turn after the load answered %q: the context lost the partial answer", shorten(txt))
	}
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// waitStored polls the session's stored events (through the store package,
// as another process would) until one satisfies pred.
func waitStored(t *testing.T, ctx context.Context, dbPath, sid string, pred func(kind string, payload []byte) bool) {
	t.Helper()
	st, err := corvidstore.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for {
		evs, err := st.Events(ctx, sid)
		if err != nil {
			t.Fatalf("stored events of %s: %v", sid, err)
		}
		for _, ev := range evs {
			if pred(ev.Kind, ev.Payload) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no stored event of %s matched: %v", sid, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestKillDuringAToolCallReplaysItAsInterrupted(t *testing.T) {
	st := newSharedHome(t, scriptFile(t, "kill-during-shell"))
	a := st.start(t, testkit.Minimal(), "--yolo")
	sid := a.NewSession(a.ctx, st.workspace)
	a.CallAsync("session/prompt", testkit.TextPrompt(sid, "sleep a while"))
	running, err := a.WaitUpdate(a.ctx, func(u testkit.Update) bool {
		return u.SessionID == sid && u.SessionUpdate == "tool_call_update" && u.Status == "in_progress"
	})
	if err != nil {
		t.Fatal(err)
	}
	// Kill once the running state is on disk (killing earlier is the
	// streaming test's business), while the shell still sleeps.
	waitStored(t, a.ctx, st.dbPath(), sid, func(kind string, payload []byte) bool {
		return kind == "tool_call_update" && strings.Contains(string(payload), `"in_progress"`)
	})
	a.Kill()

	b := st.start(t, testkit.Minimal())
	replay := b.load(t, sid)
	tools := normalise(replay).Tools
	if len(tools) != 1 {
		t.Fatalf("replayed tool calls %+v, want the interrupted shell call", tools)
	}
	tc := tools[0]
	if tc.ID != running.ToolCallID || tc.Status != "failed" || !strings.Contains(tc.Text, "interrupted") {
		t.Errorf("replayed tool call %+v, want %s failed with an \"interrupted\" note", tc, running.ToolCallID)
	}
	// The model context got a result for the dangling tool use, so the
	// next model call is valid and is the one after it.
	next := b.turn(t, sid, "go on", "end_turn")
	if txt := testkit.TextOf(next, "agent_message_chunk"); txt != "resumed after the crash" {
		t.Errorf("turn after the crash answered %q", txt)
	}
}
