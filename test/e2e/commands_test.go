package e2e

// Slash commands, skills, project instructions and compaction, through the
// built binary. Where the test must see what the model was sent (the system
// prompt, an expanded command, the context after /clear or compaction),
// corvid runs on the fake Anthropic API.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	fa "github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

const (
	agentsMarker = "AGENTS-MARKER-ZX: always run make lint before you finish."
	skillMarker  = "DEPLOY-STEPS-7Q: run ./ship.sh staging, then check /health."
)

// writeProject gives workspace a custom command (fix), a skill (deploy) and an AGENTS.md.
func writeProject(t *testing.T, workspace string) {
	t.Helper()
	files := map[string]string{
		".corvid/commands/fix.md":        "---\ndescription: Fix an issue in one area\nargument-hint: ISSUE AREA\n---\nFix issue $1 in the $2 area. Request as typed: $ARGUMENTS\n",
		".corvid/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Ship the build to the staging servers\n---\n# Deploy\n\n" + skillMarker + "\n",
		"AGENTS.md":                      "# Project notes\n\n" + agentsMarker + "\n",
	}
	for name, body := range files {
		p := filepath.Join(workspace, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// availableCommand is one entry of available_commands_update.
type availableCommand struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Input       *struct {
		Hint string `json:"hint"`
	} `json:"input"`
}

func commandsOf(u testkit.Update) []availableCommand {
	var p struct {
		AvailableCommands []availableCommand `json:"availableCommands"`
	}
	_ = json.Unmarshal(u.Raw, &p)
	return p.AvailableCommands
}

// checkCommandsAfter waits for the session's first available_commands_update,
// checks it came after the response at responseSeq, and checks its content.
func (s *session) checkCommandsAfter(t *testing.T, what, sid string, responseSeq int) {
	t.Helper()
	u, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "available_commands_update"))
	if err != nil {
		t.Fatalf("%s: no available_commands_update: %v", what, err)
	}
	if first := testkit.OfKind(s.Updates(sid), "available_commands_update")[0]; first.Seq < responseSeq {
		t.Errorf("%s: available_commands_update (line %d) came before the response (line %d)", what, first.Seq, responseSeq)
	}
	cmds := commandsOf(u)
	byName := map[string]availableCommand{}
	for _, c := range cmds {
		byName[c.Name] = c
	}
	for _, name := range []string{"compact", "clear", "init", "review", "help", "fix", "deploy"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("%s: commands %v lack %q", what, names(cmds), name)
		}
	}
	if fix := byName["fix"]; fix.Description != "Fix an issue in one area" || fix.Input == nil || fix.Input.Hint != "ISSUE AREA" {
		t.Errorf("%s: /fix is listed as %+v, want its front matter's description and argument-hint", what, fix)
	}
	if d := byName["deploy"]; d.Description != "Ship the build to the staging servers" {
		t.Errorf("%s: /deploy is described as %q, want the skill's description", what, d.Description)
	}
}

func names(cmds []availableCommand) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name)
	}
	return out
}

func TestCommandListFollowsSessionNewAndSessionLoad(t *testing.T) {
	st := newSharedHome(t, text("hello", 0))
	writeProject(t, st.workspace)
	a := st.start(t, testkit.Minimal())
	p := a.CallAsync("session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{}})
	raw, rerr := p.Wait(a.ctx)
	if rerr != nil {
		t.Fatalf("session/new: %v", rerr)
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(raw, &res)
	a.checkCommandsAfter(t, "session/new", res.SessionID, p.Seq())
	a.turn(t, res.SessionID, "hi", "end_turn")
	a.Close()

	b := st.start(t, testkit.Minimal())
	p = b.CallAsync("session/load", map[string]any{"sessionId": res.SessionID, "cwd": st.workspace, "mcpServers": []any{}})
	if _, rerr := p.Wait(b.ctx); rerr != nil {
		t.Fatalf("session/load: %v", rerr)
	}
	b.checkCommandsAfter(t, "session/load", res.SessionID, p.Seq())
}

// userTexts is the text of every user message of a request, in order.
func userTexts(r fa.Request) []string {
	var out []string
	for _, m := range r.Body.Messages {
		if m.Role != "user" {
			continue
		}
		var b strings.Builder
		for _, c := range m.Content {
			if c.Type == "text" {
				b.WriteString(c.Text)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// apiProject starts corvid on the fake Anthropic API in a workspace holding writeProject's files.
func apiProject(t *testing.T, extra ...string) (*session, *fa.Server, string) {
	t.Helper()
	api := fa.New(t)
	ws := t.TempDir()
	writeProject(t, ws)
	s := startOnAPI(t, api, "claude-haiku-4-5", ws, "", extra...)
	return s, api, s.NewSession(s.ctx, ws)
}

func TestCustomCommandExpandsItsArgumentsIntoThePrompt(t *testing.T) {
	s, api, sid := apiProject(t)
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("fixing")}})
	s.turn(t, sid, "/fix 42 parser", "end_turn")
	reqs := api.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	got := userTexts(reqs[0])
	want := "Fix issue 42 in the parser area. Request as typed: 42 parser"
	if len(got) != 1 || strings.TrimSpace(got[0]) != want {
		t.Errorf("the model received user text %q, want the expanded command %q", got, want)
	}
}

func TestSkillIsListedInTheSystemPromptAndLoadedByTheSkillTool(t *testing.T) {
	s, api, sid := apiProject(t)
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.ToolUse("toolu_skill_1", "skill", `{"name":"deploy"}`)}},
		fa.Response{Blocks: []fa.Block{fa.Text("deployed")}},
	)
	ups := s.turn(t, sid, "ship it", "end_turn")
	reqs := api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if sys := reqs[0].SystemText(); !strings.Contains(sys, "deploy: Ship the build to the staging servers") {
		t.Errorf("the system prompt does not list the skill with its description:\n%s", sys)
	}
	if strings.Contains(reqs[0].SystemText(), skillMarker) {
		t.Error("the system prompt holds the skill's body; only its name and description belong there")
	}
	var result string
	found := false
	for _, m := range reqs[1].Body.Messages {
		for _, c := range m.Content {
			if c.Type == "tool_result" && c.ToolUseID == "toolu_skill_1" {
				result, found = c.ResultText(), true
			}
		}
	}
	if !found || !strings.Contains(result, skillMarker) {
		t.Errorf("the skill tool's result sent to the model (found %v) is %q, want the skill's body", found, result)
	}
	if got := finalToolStatus(ups); got != "completed" {
		t.Errorf("the skill tool call ended %q", got)
	}
}

func TestAgentsMDShapesTheSystemPrompt(t *testing.T) {
	const defaultStart = "You are corvid, a coding agent."
	const custom = "You are TESTBASE-Q, a terse agent."
	for _, c := range []struct {
		name        string
		args        []string
		wantStart   string
		wantDefault bool
		wantAgents  bool
	}{
		{"default", nil, defaultStart, true, true},
		{"no project instructions", []string{"--no-project-instructions"}, defaultStart, true, false},
		{"system replaces the base", []string{"--system", custom}, custom, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, api, sid := apiProject(t, c.args...)
			api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("ok")}})
			s.turn(t, sid, "hello", "end_turn")
			reqs := api.Requests()
			if len(reqs) != 1 {
				t.Fatalf("the model got %d requests, want 1", len(reqs))
			}
			sys := reqs[0].SystemText()
			if !strings.HasPrefix(sys, c.wantStart) {
				t.Errorf("the system prompt starts %q, want %q", shorten(sys), c.wantStart)
			}
			if got := strings.Contains(sys, defaultStart); got != c.wantDefault {
				t.Errorf("the system prompt holds the default base: %v, want %v", got, c.wantDefault)
			}
			if got := strings.Contains(sys, agentsMarker); got != c.wantAgents {
				t.Errorf("the system prompt holds AGENTS.md: %v, want %v\n%s", got, c.wantAgents, sys)
			}
		})
	}
}

func TestHelpAnswersWithoutTheModel(t *testing.T) {
	s, api, sid := apiProject(t)
	ups := s.turn(t, sid, "/help", "end_turn")
	if n := len(api.Requests()); n != 0 {
		t.Errorf("/help sent %d requests to the model", n)
	}
	msg := testkit.TextOf(ups, "agent_message_chunk")
	for _, want := range []string{"/compact", "/clear", "/init", "/review", "/help", "/fix", "deploy"} {
		if !strings.Contains(msg, want) {
			t.Errorf("/help's answer lacks %q:\n%s", want, msg)
		}
	}
}

func TestClearEmptiesTheModelContext(t *testing.T) {
	s, api, sid := apiProject(t)
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("first answer")}})
	s.turn(t, sid, "first question", "end_turn")
	ups := s.turn(t, sid, "/clear", "end_turn")
	if n := len(api.Requests()); n != 1 {
		t.Errorf("/clear called the model (%d requests in all, want 1)", n)
	}
	if msg := testkit.TextOf(ups, "agent_message_chunk"); msg == "" {
		t.Error("/clear said nothing")
	}
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("fresh answer")}})
	s.turn(t, sid, "after the clear", "end_turn")
	reqs := api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	msgs := reqs[1].Body.Messages
	if len(msgs) != 1 || msgs[0].Role != "user" || !slices.Equal(userTexts(reqs[1]), []string{"after the clear"}) {
		t.Errorf("after /clear the model got %d messages with user texts %q, want only the new prompt", len(msgs), userTexts(reqs[1]))
	}
}

// usageUsed lists usage_update.used of ups, with each one's transcript line.
func usageUsed(ups []testkit.Update) (used []int64, size []int64, seq []int) {
	for _, u := range testkit.OfKind(ups, "usage_update") {
		var v struct {
			Used int64 `json:"used"`
			Size int64 `json:"size"`
		}
		_ = json.Unmarshal(u.Raw, &v)
		used, size, seq = append(used, v.Used), append(size, v.Size), append(seq, u.Seq)
	}
	return used, size, seq
}

// checkCompacted checks a turn's updates show an automatic compaction: a
// message says so and a usage_update after it reports less than before.
func checkCompacted(t *testing.T, ups []testkit.Update, before int64) {
	t.Helper()
	said := -1
	for _, u := range testkit.OfKind(ups, "agent_message_chunk") {
		if strings.Contains(strings.ToLower(u.Content.Text), "compacted") {
			said = u.Seq
			break
		}
	}
	if said < 0 {
		t.Fatalf("no agent message says the conversation was compacted; the turn said %q", testkit.TextOf(ups, "agent_message_chunk"))
	}
	used, _, seq := usageUsed(ups)
	for i := range used {
		if seq[i] > said {
			if used[i] >= before {
				t.Errorf("the usage_update after compaction says used %d, want less than %d", used[i], before)
			}
			return
		}
	}
	t.Errorf("no usage_update followed the compaction message (used %v)", used)
}

func TestCompactionNearTheScriptsContextWindow(t *testing.T) {
	// Window 2000: compaction starts at 85% = 1700 tokens in context.
	// Response 1 leaves 1690 (no compaction), response 2 leaves 1720; the
	// third turn compacts. The summary call sees [u1, a1, instruction] and
	// so plays response 1 again; the third answer is response 2.
	s := startCorvid(t, scriptFile(t, "near-context-window"), testkit.Options{})
	sid := s.ready(t, testkit.Minimal())
	s.turn(t, sid, "question one", "end_turn")
	second := s.turn(t, sid, "question two", "end_turn")
	if strings.Contains(strings.ToLower(testkit.TextOf(second, "agent_message_chunk")), "compacted") {
		t.Error("compacted at 1690 of 2000 tokens, below 85%")
	}
	used, size, _ := usageUsed(second)
	if !slices.Equal(used, []int64{1720}) || !slices.Equal(size, []int64{2000}) {
		t.Errorf("second turn usage used %v size %v, want [1720] of [2000]", used, size)
	}
	third := s.turn(t, sid, "question three", "end_turn")
	checkCompacted(t, third, 1720)
	if got := testkit.TextOf(third, "agent_message_chunk"); !strings.Contains(got, "answer three") {
		t.Errorf("the turn after compaction answered %q, want answer three", got)
	}
}

// compactionRun is a session on the fake Anthropic API that compacted
// automatically in its third turn, and the requests the model received.
type compactionRun struct {
	api   *fa.Server
	third []testkit.Update // the updates of the compacting turn
	reqs  []fa.Request     // two turns, the summary, the third turn; then the turn after a load
}

const compactionSummary = "SUMMARY-7K: the user asked two questions, both answered."

// runCompaction plays: turn 1 (1000 tokens used), turn 2 (171020 of a
// 200000 window, over the 85% mark), turn 3 (compacts first), then a load in
// a new process on the same store and turn 4.
func runCompaction(t *testing.T) compactionRun {
	t.Helper()
	api := fa.New(t)
	home := filepath.Join(t.TempDir(), "corvid-home")
	ws := t.TempDir()
	const model = "claude-haiku-4-5" // one 200000-token window: compaction at 170000
	a := startOnAPI(t, api, model, ws, home)
	sid := a.NewSession(a.ctx, ws)
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.Text("answer one")}, Usage: fa.Usage{InputTokens: 1000, OutputTokens: 10}},
		fa.Response{Blocks: []fa.Block{fa.Text("answer two")}, Usage: fa.Usage{InputTokens: 171000, OutputTokens: 20}},
	)
	a.turn(t, sid, "question one alpha", "end_turn")
	a.turn(t, sid, "question two beta", "end_turn")
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.Text(compactionSummary)}, Usage: fa.Usage{InputTokens: 900, OutputTokens: 30}},
		fa.Response{Blocks: []fa.Block{fa.Text("answer three")}, Usage: fa.Usage{InputTokens: 3000, OutputTokens: 15}},
	)
	run := compactionRun{api: api, third: a.turn(t, sid, "question three gamma", "end_turn")}
	if n := len(api.Requests()); n != 4 {
		t.Fatalf("the model got %d requests, want 4 (two turns, a summary, the third turn)", n)
	}
	a.Close()

	b := startOnAPI(t, api, model, ws, home)
	b.load(t, sid)
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("answer four")}, Usage: fa.Usage{InputTokens: 3100, OutputTokens: 5}})
	b.turn(t, sid, "question four delta", "end_turn")
	run.reqs = api.Requests()
	if len(run.reqs) != 5 {
		t.Fatalf("after the load the model got %d requests in all, want 5", len(run.reqs))
	}
	return run
}

func TestCompactionSummarisesAndALoadContinuesFromTheSummary(t *testing.T) {
	run := runCompaction(t)
	checkCompacted(t, run.third, 171020)
	if got := testkit.TextOf(run.third, "agent_message_chunk"); !strings.Contains(got, "answer three") {
		t.Errorf("the compacting turn answered %q, want answer three after the note", got)
	}
	summaryReq := run.reqs[2]
	if texts := userTexts(summaryReq); len(texts) != 2 || !strings.Contains(texts[0], "question one alpha") || !strings.Contains(texts[1], "Summarise") {
		t.Errorf("the summary request's user texts are %q, want the older turn, then the instruction", texts)
	}
	checkStartsWithSummary(t, "the turn after compaction", run.reqs[3], "question three gamma")
	checkStartsWithSummary(t, "the first request after a load", run.reqs[4], "question four delta")
}

// Regression (internal/agent/commands.go, Turn.compact): the summary request was
// built with append(older, instruction), and older is history[:cut] sharing
// its array with recent = history[cut:], so the instruction overwrites
// recent[0], the first kept user prompt. The compacted context then holds
// [summary, ack, <instruction>, a2, u3]: "question two beta" is gone and the
// model is told again to summarise, live and after a load.
func TestCompactionKeepsTheLastTwoTurnsVerbatim(t *testing.T) {
	run := runCompaction(t)
	for i, what := range map[int]string{3: "the turn after compaction", 4: "the first request after a load"} {
		texts := userTexts(run.reqs[i])
		all := strings.Join(texts, "\n")
		if !strings.Contains(all, "question two beta") {
			t.Errorf("%s: lost the second-last user turn, which compaction keeps verbatim: %q", what, texts)
		}
		if strings.Contains(all, "Summarise the conversation above") {
			t.Errorf("%s: the context carries the summarisation instruction as a user turn: %q", what, texts)
		}
	}
}

// checkStartsWithSummary checks r's context opens with the compaction
// summary, has dropped the first turn, and ends with the new prompt last.
func checkStartsWithSummary(t *testing.T, what string, r fa.Request, last string) {
	t.Helper()
	texts := userTexts(r)
	switch {
	case len(texts) == 0 || !strings.Contains(texts[0], compactionSummary):
		t.Errorf("%s: user texts %q, want the summary first", what, texts)
	case strings.Contains(strings.Join(texts, "\n"), "question one alpha"):
		t.Errorf("%s: still carries the compacted first turn: %q", what, texts)
	case !strings.Contains(texts[len(texts)-1], last):
		t.Errorf("%s: ends with %q, want the new prompt %q", what, texts[len(texts)-1], last)
	}
}

// Regression (internal/agent, LoadSession): a loaded session started with lastUsed 0
// (only the mode, model and thought level are restored; the replayed
// usage_update is not read back), so a session saved over the 85% mark does
// not compact on its next turn after a load: the whole over-full context
// goes to the model, and compaction waits one more turn.
func TestCompactionIsDueAfterALoadOfAFullSession(t *testing.T) {
	api := fa.New(t)
	home := filepath.Join(t.TempDir(), "corvid-home")
	ws := t.TempDir()
	a := startOnAPI(t, api, "claude-haiku-4-5", ws, home)
	sid := a.NewSession(a.ctx, ws)
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.Text("answer one")}, Usage: fa.Usage{InputTokens: 1000, OutputTokens: 10}},
		fa.Response{Blocks: []fa.Block{fa.Text("answer two")}, Usage: fa.Usage{InputTokens: 171000, OutputTokens: 20}},
	)
	a.turn(t, sid, "question one alpha", "end_turn")
	a.turn(t, sid, "question two beta", "end_turn")
	a.Close()

	b := startOnAPI(t, api, "claude-haiku-4-5", ws, home)
	b.load(t, sid)
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.Text(compactionSummary)}, Usage: fa.Usage{InputTokens: 900, OutputTokens: 30}},
		fa.Response{Blocks: []fa.Block{fa.Text("answer three")}, Usage: fa.Usage{InputTokens: 3000, OutputTokens: 15}},
	)
	third := b.turn(t, sid, "question three gamma", "end_turn")
	checkCompacted(t, third, 171020)
	reqs := api.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model got %d requests, want 4 (two turns, then a summary and the third turn)", len(reqs))
	}
	checkStartsWithSummary(t, "the first turn after a load", reqs[3], "question three gamma")
}

func TestManualCompactSummarisesWithTheFocusAndAShortSessionIsLeftAlone(t *testing.T) {
	s, api, sid := apiProject(t)
	early := s.turn(t, sid, "/compact", "end_turn")
	if n := len(api.Requests()); n != 0 {
		t.Errorf("/compact of an empty conversation called the model %d times", n)
	}
	if msg := testkit.TextOf(early, "agent_message_chunk"); !strings.Contains(msg, "Nothing to compact") {
		t.Errorf("/compact of an empty conversation said %q", msg)
	}
	for _, q := range []string{"question one alpha", "question two beta", "question three gamma"} {
		api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("answer")}})
		s.turn(t, sid, q, "end_turn")
	}
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text(compactionSummary)}, Usage: fa.Usage{InputTokens: 400, OutputTokens: 20}})
	ups := s.turn(t, sid, "/compact the parser work", "end_turn")
	reqs := api.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model got %d requests, want 4 (three turns and the summary)", len(reqs))
	}
	texts := userTexts(reqs[3])
	if len(texts) == 0 || !strings.Contains(texts[len(texts)-1], "Focus on: the parser work") {
		t.Errorf("the summary request ends with %q, want the instruction with the focus", texts)
	}
	if strings.Contains(strings.Join(texts, "\n"), "question two beta") {
		t.Errorf("the summary request covers the kept turns too: %q", texts)
	}
	if msg := testkit.TextOf(ups, "agent_message_chunk"); !strings.Contains(msg, "Compacted") {
		t.Errorf("/compact said %q", msg)
	}
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("answer four")}})
	s.turn(t, sid, "question four delta", "end_turn")
	checkStartsWithSummary(t, "the turn after /compact", api.Requests()[4], "question four delta")
}

// A command file added while the session runs is offered without a restart.
func TestANewCommandFileIsPushedWhileTheSessionRuns(t *testing.T) {
	s, _, sid := apiProject(t)
	if _, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "available_commands_update")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.workspace, ".corvid", "commands", "bench.md")
	if err := os.WriteFile(p, []byte("---\ndescription: Run the benchmarks\n---\nRun the benchmarks.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		return u.SessionID == sid && u.SessionUpdate == "available_commands_update" && slices.Contains(names(commandsOf(u)), "bench")
	})
	if err != nil {
		t.Fatalf("no available_commands_update with /bench after the file appeared: %v", err)
	}
	if got := names(commandsOf(u)); !slices.Contains(got, "fix") || !slices.Contains(got, "help") {
		t.Errorf("the re-pushed list %v is not the whole set", got)
	}
}
