package e2e

// CodeBuddy's ACP contract (docs/codebuddy.md), through the built binary:
// the client turn id (C8–C14), --compat codebuddy, authenticate's
// userinfo, session/set_agent, and the multitask option's protocol surface.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	fa "github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

const turnIDKey = "codebuddy.ai/conversationRequestId"

var uuidv7Hex = regexp.MustCompile(`^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$`)

// metaOf is the _meta object of a raw JSON object (nil when absent).
func metaOf(raw json.RawMessage) map[string]any {
	var v struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.Meta
}

// promptWithMeta sends session/prompt with _meta and returns the raw result.
func (s *session) promptWithMeta(sid, text string, meta map[string]any) (json.RawMessage, *testkit.RPCError) {
	p := testkit.TextPrompt(sid, text)
	if meta != nil {
		p["_meta"] = meta
	}
	return s.Call(s.ctx, "session/prompt", p)
}

// readThenAnswer queues a turn that reads a file, then answers.
func readThenAnswer(api *fa.Server, id string) {
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.ToolUse("toolu_"+id, "read", `{"path":"notes.txt"}`)}},
		fa.Response{Blocks: []fa.Block{fa.Text("done " + id)}},
	)
}

func TestTurnIDIsEchoedStoredAndSentToTheProvider(t *testing.T) {
	api := fa.New(t)
	home := filepath.Join(t.TempDir(), "corvid-home")
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startOnAPI(t, api, "claude-sonnet-4-6", ws, home)
	sid := s.NewSession(s.ctx, ws)
	// The command list follows session/new on its own schedule and belongs
	// to no turn: let it arrive first.
	if _, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "available_commands_update")); err != nil {
		t.Fatal(err)
	}

	// A client id, beside an unrelated codebuddy.ai/requestId (C14).
	const given = "0198a1b2c3d47e5f8a9b0c1d2e3f4a5b"
	readThenAnswer(api, "a")
	before := len(s.Updates(sid))
	raw, rerr := s.promptWithMeta(sid, "read notes", map[string]any{turnIDKey: given, "codebuddy.ai/requestId": "req-1"})
	if rerr != nil {
		t.Fatalf("prompt: %v", rerr)
	}
	if got := metaOf(raw)[turnIDKey]; got != given {
		t.Errorf("PromptResponse._meta[%s] = %v, want %s (response %s)", turnIDKey, got, given, raw)
	}
	if got, ok := metaOf(raw)["codebuddy.ai/requestId"]; ok {
		t.Errorf("PromptResponse._meta has codebuddy.ai/requestId %v: it is a separate key corvid does not echo as the turn id", got)
	}
	ups := s.Updates(sid)[before:]
	kinds := map[string]bool{}
	for _, u := range ups {
		kinds[u.SessionUpdate] = true
		if u.SessionUpdate == "available_commands_update" {
			continue // a list refresh belongs to no turn
		}
		if got := metaOf(u.Raw)[turnIDKey]; got != given {
			t.Errorf("%s update has _meta[%s] = %v, want %s: %s", u.SessionUpdate, turnIDKey, got, given, u.Raw)
		}
	}
	for _, k := range []string{"tool_call", "tool_call_update", "agent_message_chunk", "usage_update"} {
		if !kinds[k] {
			t.Errorf("the turn sent no %s update (kinds %v); the test means to see the id on each", k, kinds)
		}
	}
	reqs := api.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the API got %d requests, want 2 (before and after the read)", len(reqs))
	}
	for i, r := range reqs {
		if got := r.Header.Get("X-Conversation-Request-ID"); got != given {
			t.Errorf("model request %d: X-Conversation-Request-ID = %q, want %s", i, got, given)
		}
	}

	// Omitted: corvid makes a UUIDv7 and uses it in every place (C10);
	// the same client id again is accepted (C11).
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("second")}})
	raw, rerr = s.promptWithMeta(sid, "again", nil)
	if rerr != nil {
		t.Fatalf("prompt without an id: %v", rerr)
	}
	made, _ := metaOf(raw)[turnIDKey].(string)
	if !uuidv7Hex.MatchString(made) {
		t.Errorf("generated turn id %q is not a hyphen-free lowercase UUIDv7", made)
	}
	if got := api.Requests()[2].Header.Get("X-Conversation-Request-ID"); got != made {
		t.Errorf("X-Conversation-Request-ID = %q, want the generated %s", got, made)
	}
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("third")}})
	if _, rerr := s.promptWithMeta(sid, "repeat", map[string]any{turnIDKey: given}); rerr != nil {
		t.Errorf("a repeated id was refused: %v", rerr)
	}
	s.Close()

	// Stored with the turn: a load replays each turn with its id.
	b := startOnAPI(t, api, "claude-sonnet-4-6", ws, home)
	b.callSetup(t, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	var order []string
	for _, u := range b.Updates(sid) {
		if u.SessionUpdate == "available_commands_update" {
			continue
		}
		id, _ := metaOf(u.Raw)[turnIDKey].(string)
		if u.SessionUpdate == "user_message_chunk" {
			order = append(order, id)
		}
		if u.SessionUpdate == "agent_message_chunk" && strings.Contains(u.Content.Text, "second") && id != made {
			t.Errorf("replayed answer of the second turn has id %q, want %s", id, made)
		}
		if u.SessionUpdate == "tool_call" && id != given {
			t.Errorf("replayed tool call of the first turn has id %q, want %s", id, given)
		}
	}
	if want := []string{given, made, given}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("replayed prompts carry ids %v, want %v", order, want)
	}
}

func TestInvalidTurnIDIsRefusedWithDetails(t *testing.T) {
	s := startCorvid(t, text("never", 0), testkit.Options{})
	sid := s.ready(t, testkit.Minimal())
	for _, bad := range []any{
		"0198A1B2C3D47E5F8A9B0C1D2E3F4A5B",     // uppercase
		"0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", // hyphens
		"0198a1b2c3d44e5f8a9b0c1d2e3f4a5b",     // version 4
		"0198a1b2c3d47e5f0a9b0c1d2e3f4a5b",     // wrong variant
		"0198a1b2c3d47e5f8a9b",                 // short
		42,
	} {
		_, rerr := s.promptWithMeta(sid, "hi", map[string]any{turnIDKey: bad})
		if rerr == nil || rerr.Code != -32602 {
			t.Errorf("turn id %v: got %v, want -32602", bad, rerr)
			continue
		}
		var data struct {
			Details string `json:"details"`
		}
		if json.Unmarshal(rerr.Data, &data) != nil || !strings.Contains(data.Details, turnIDKey) {
			t.Errorf("turn id %v: error data %s does not name the key in details", bad, rerr.Data)
		}
	}
	if n := len(testkit.OfKind(s.Updates(sid), "user_message_chunk")) + len(testkit.OfKind(s.Updates(sid), "agent_message_chunk")); n != 0 {
		t.Errorf("a refused prompt produced %d updates", n)
	}
}

// startWithHome serves corvid on the fake Anthropic API with CORVID_HOME
// home (its config dir is home/config), with extra env and args.
func startWithHome(t *testing.T, api *fa.Server, home, ws string, env []string, opts testkit.Options, args ...string) *session {
	t.Helper()
	opts.Args = append([]string{"acp", "-m", "anthropic:claude-sonnet-4-6"}, args...)
	opts.Env = append([]string{"ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off", "CORVID_HOME=" + home}, env...)
	opts.Dir = ws
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &session{Editor: testkit.Start(t, testkit.BuildCorvid(t), opts), ctx: ctx, workspace: ws}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rpcDetails is error.data.details.
func rpcDetails(rerr *testkit.RPCError) string {
	var d struct {
		Details string `json:"details"`
	}
	_ = json.Unmarshal(rerr.Data, &d)
	return d.Details
}

// Without --compat the frames stay schema-exact (the kit checks each one)
// and carry CodeBuddy's additions only in _meta; with it, the root-level
// flag and a session_end closing each turn are added (C44, C94).
func TestCompatCodeBuddyAddsTheDialectFrames(t *testing.T) {
	api := fa.New(t)
	ws := t.TempDir()
	for _, compat := range []bool{false, true} {
		var args []string
		opts := testkit.Options{}
		if compat {
			args, opts.Dialect = []string{"--compat", "codebuddy"}, "codebuddy"
		}
		s := startWithHome(t, api, t.TempDir(), ws, nil, opts, args...)
		res, rerr := s.Initialize(s.ctx, testkit.Minimal())
		if rerr != nil {
			t.Fatal(rerr)
		}
		var caps map[string]json.RawMessage
		_ = json.Unmarshal(res.AgentCapabilities, &caps)
		if got := metaOf(res.AgentCapabilities)["codebuddy.ai/multitaskSupport"]; got != true {
			t.Errorf("compat %v: agentCapabilities._meta multitaskSupport = %v, want true", compat, got)
		}
		for _, flag := range []string{"multitaskSupport", "codeModeSupport"} {
			if got, ok := caps[flag]; ok != compat || compat && string(got) != "true" {
				t.Errorf("compat %v: root-level %s = %s (present %v)", compat, flag, got, ok)
			}
		}
		sid := s.NewSession(s.ctx, ws)
		api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("hi")}})
		raw, rerr := s.promptWithMeta(sid, "hello", nil)
		if rerr != nil {
			t.Fatal(rerr)
		}
		ends := testkit.OfKind(s.Updates(sid), "session_end")
		switch {
		case !compat && len(ends) != 0:
			t.Errorf("without --compat corvid sent session_end: %s", ends[0].Raw)
		case compat && len(ends) != 1:
			t.Errorf("with --compat codebuddy: %d session_end updates, want 1", len(ends))
		case compat:
			var last testkit.Update
			for _, u := range s.Updates(sid) {
				if u.SessionUpdate != "available_commands_update" { // belongs to no turn
					last = u
				}
			}
			if last.SessionUpdate != "session_end" || metaOf(last.Raw)[turnIDKey] != metaOf(raw)[turnIDKey] {
				t.Errorf("the turn's last update is %s, want session_end with the turn id %v", last.Raw, metaOf(raw)[turnIDKey])
			}
			if !strings.Contains(string(last.Raw), `"stopReason":"end_turn"`) {
				t.Errorf("session_end %s does not carry the stop reason", last.Raw)
			}
		}
		s.Close()
	}
}

// `corvid --acp` is CodeBuddy's launch line: it implies the dialect.
func TestACPFlagImpliesCompatCodeBuddy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: []string{"--acp", "-m", "script:" + testkit.WriteScript(t, text("hi", 0))}, Dialect: "codebuddy"})
	res, rerr := e.Initialize(ctx, testkit.Minimal())
	if rerr != nil {
		t.Fatal(rerr)
	}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(res.AgentCapabilities, &caps)
	if string(caps["multitaskSupport"]) != "true" {
		t.Errorf("corvid --acp capabilities %s lack the root-level multitaskSupport", res.AgentCapabilities)
	}
	sid := e.NewSession(ctx, e.Dir())
	if stop, rerr := e.Prompt(ctx, sid, "hello"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if n := len(testkit.OfKind(e.Updates(sid), "session_end")); n != 1 {
		t.Errorf("corvid --acp sent %d session_end updates for one turn, want 1", n)
	}
}

// authenticate reports the configured [identity] (C15).
func TestAuthenticateReturnsTheConfiguredUserInfo(t *testing.T) {
	api := fa.New(t)
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "config", "config.toml"), "[identity]\nuser_id = \"u-42\"\nuser_name = \"ada\"\nuser_nickname = \"Ada L.\"\n")
	s := startWithHome(t, api, home, t.TempDir(), nil, testkit.Options{})
	if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
		t.Fatal(rerr)
	}
	raw, rerr := s.Call(s.ctx, "authenticate", map[string]any{"methodId": "env:ANTHROPIC_API_KEY"})
	if rerr != nil {
		t.Fatal(rerr)
	}
	info, _ := metaOf(raw)["codebuddy.ai/userinfo"].(map[string]any)
	if info["userId"] != "u-42" || info["userName"] != "ada" || info["userNickname"] != "Ada L." {
		t.Errorf("authenticate result %s, want the configured userinfo", raw)
	}

	// No identity configured: no userinfo.
	s2 := startWithHome(t, api, t.TempDir(), t.TempDir(), nil, testkit.Options{})
	_, _ = s2.Initialize(s2.ctx, testkit.Minimal())
	raw, rerr = s2.Call(s2.ctx, "authenticate", map[string]any{"methodId": "env:ANTHROPIC_API_KEY"})
	if rerr != nil || metaOf(raw) != nil {
		t.Errorf("authenticate without [identity] = %s %v, want {} ", raw, rerr)
	}
}

// session/set_agent switches the session's profile: the next request has
// its system prompt; an unknown profile is -32602 with details (C93).
func TestSetAgentSwitchesTheSessionProfile(t *testing.T) {
	api := fa.New(t)
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "config", "agents", "reviewer.toml"), "name = \"reviewer\"\nsystem_prompt = \"You are REVIEWER-X.\"\ninstructions = \"Cite line numbers.\"\n")
	ws := t.TempDir()
	s := startWithHome(t, api, home, ws, nil, testkit.Options{})
	if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := s.NewSession(s.ctx, ws)
	raw, rerr := s.Call(s.ctx, "session/set_agent", map[string]any{"sessionId": sid, "agentName": "reviewer"})
	if rerr != nil {
		t.Fatalf("set_agent reviewer: %v", rerr)
	}
	if a, _ := metaOf(raw)["corvid.dev/agent"].(map[string]any); a["name"] != "reviewer" {
		t.Errorf("set_agent result %s does not name the profile", raw)
	}
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("ok")}})
	if _, rerr := s.promptWithMeta(sid, "review", nil); rerr != nil {
		t.Fatal(rerr)
	}
	if sys := api.Requests()[0].SystemText(); !strings.Contains(sys, "You are REVIEWER-X.") || !strings.Contains(sys, "Cite line numbers.") {
		t.Errorf("after set_agent the system prompt is %q, want the reviewer's", sys)
	}
	s.Close()

	// The choice is stored: a load in a new process still has it.
	s = startWithHome(t, api, home, ws, nil, testkit.Options{})
	if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
		t.Fatal(rerr)
	}
	loaded := s.MustCall(s.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}, nil)
	if a, _ := metaOf(loaded)["corvid.dev/agent"].(map[string]any); a["name"] != "reviewer" {
		t.Errorf("session/load result %s does not name the stored profile", loaded)
	}
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("ok")}})
	if _, rerr := s.promptWithMeta(sid, "again", nil); rerr != nil {
		t.Fatal(rerr)
	}
	if sys := api.Requests()[1].SystemText(); !strings.Contains(sys, "You are REVIEWER-X.") {
		t.Errorf("after a load the system prompt is %q, want the reviewer's", sys)
	}
	for _, bad := range []string{"nobody", "../reviewer", "/etc/x.toml"} {
		_, rerr = s.Call(s.ctx, "session/set_agent", map[string]any{"sessionId": sid, "agentName": bad})
		if rerr == nil || rerr.Code != -32602 || rpcDetails(rerr) == "" {
			t.Errorf("set_agent %q = %+v, want -32602 with details", bad, rerr)
		}
	}
}

// CodeBuddy's project and user folders (.codebuddy/commands, subfolders as
// dir:name; .codebuddy/skills; ~/.codebuddy/…) are read beside .corvid, and
// CODEBUDDY.md, CLAUDE.md and GEMINI.md beside AGENTS.md, AGENTS.md first
// (C22); --no-project-instructions drops all of them.
func TestCodeBuddyProjectFilesAndMemoryFiles(t *testing.T) {
	api := fa.New(t)
	ws, userHome := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(ws, ".codebuddy", "commands", "git", "commit.md"), "---\ndescription: Commit staged work\n---\nCommit with message: $ARGUMENTS\n")
	writeFile(t, filepath.Join(ws, ".codebuddy", "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Deploy the service\n---\nRun make deploy.\n")
	writeFile(t, filepath.Join(userHome, ".codebuddy", "commands", "standup.md"), "---\ndescription: Write my standup\n---\nSummarise yesterday.\n")
	writeFile(t, filepath.Join(userHome, ".codebuddy", "skills", "triage", "SKILL.md"), "---\nname: triage\ndescription: Triage a bug\n---\nReproduce first.\n")
	for name, marker := range map[string]string{"AGENTS.md": "MARK-AGENTS", "CODEBUDDY.md": "MARK-CODEBUDDY", "CLAUDE.md": "MARK-CLAUDE", "GEMINI.md": "MARK-GEMINI"} {
		writeFile(t, filepath.Join(ws, name), "Rule: "+marker+"\n")
	}

	for _, noInstructions := range []bool{false, true} {
		var args []string
		if noInstructions {
			args = []string{"--no-project-instructions"}
		}
		s := startWithHome(t, api, t.TempDir(), ws, []string{"HOME=" + userHome}, testkit.Options{}, args...)
		if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
			t.Fatal(rerr)
		}
		sid := s.NewSession(s.ctx, ws)
		u, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "available_commands_update"))
		if err != nil {
			t.Fatal(err)
		}
		got := names(commandsOf(u))
		for _, want := range []string{"git:commit", "deploy", "standup", "triage"} {
			if !slices.Contains(got, want) {
				t.Errorf("available commands %v lack %s", got, want)
			}
		}
		api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("ok")}})
		if _, rerr := s.promptWithMeta(sid, "hi", nil); rerr != nil {
			t.Fatal(rerr)
		}
		sys := api.Requests()[len(api.Requests())-1].SystemText()
		markers := []string{"MARK-AGENTS", "MARK-CODEBUDDY", "MARK-CLAUDE", "MARK-GEMINI"}
		last := -1
		for _, m := range markers {
			i := strings.Index(sys, m)
			switch {
			case noInstructions && i >= 0:
				t.Errorf("--no-project-instructions: the system prompt still holds %s", m)
			case !noInstructions && i < 0:
				t.Errorf("the system prompt lacks %s", m)
			case !noInstructions && i < last:
				t.Errorf("%s comes before an earlier memory file; want AGENTS.md, CODEBUDDY.md, CLAUDE.md, GEMINI.md", m)
			}
			last = max(last, i)
		}
		if !noInstructions && (!strings.Contains(sys, "deploy: Deploy the service") || !strings.Contains(sys, "triage: Triage a bug")) {
			t.Errorf("the system prompt does not list the .codebuddy skills")
		}
		s.Close()
	}
}

// `corvid conformance -- AGENT --acp -p x` runs AGENT with exactly those
// arguments: nothing after "--" is rewritten.
func TestConformancePassesTheAgentCommandLineUntouched(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	agent := filepath.Join(dir, "agent.sh")
	writeFile(t, agent, "#!/bin/sh\nprintf '%s\\n' \"$@\" >> \""+argsFile+"\"\nexec \""+bin+"\" acp -m script:"+testkit.WriteScript(t, text("hi", 0))+"\n")
	if err := os.Chmod(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "conformance", "--only", "initialize", "--timeout", "20s", "--", agent, "--acp", "-p", "x", "help")
	cmd.Env = testkit.IsolatedEnvAt(t.TempDir())
	out, err := cmd.CombinedOutput()
	got, rerr := os.ReadFile(argsFile)
	if rerr != nil {
		t.Fatalf("the agent never ran (%v); corvid conformance said:\n%s", err, out)
	}
	for _, run := range strings.SplitAfter(strings.TrimSpace(string(got)), "help") {
		if run = strings.TrimSpace(run); run != "" && run != "--acp\n-p\nx\nhelp" {
			t.Errorf("the agent got arguments %q, want --acp -p x help", run)
		}
	}
	if err != nil {
		t.Errorf("corvid conformance --only initialize against corvid failed: %v\n%s", err, out)
	}
}

// A client that never sends a turn id (and no --compat codebuddy) gets the
// generated id in the prompt's response only: its streamed updates carry no
// _meta, so every other editor's chunks stay as small as before.
func TestTurnIDTagsUpdatesOnlyForHostsThatUseTurnIDs(t *testing.T) {
	api := fa.New(t)
	ws := t.TempDir()
	s := startOnAPI(t, api, "claude-sonnet-4-6", ws, filepath.Join(t.TempDir(), "corvid-home"))
	sid := s.NewSession(s.ctx, ws)
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("plain answer")}})
	before := len(s.Updates(sid))
	raw, rerr := s.promptWithMeta(sid, "hello", nil)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if made, _ := metaOf(raw)[turnIDKey].(string); !uuidv7Hex.MatchString(made) {
		t.Errorf("PromptResponse._meta[%s] = %q, want a generated UUIDv7", turnIDKey, made)
	}
	chunks := 0
	for _, u := range s.Updates(sid)[before:] {
		if u.SessionUpdate != "agent_message_chunk" {
			continue
		}
		chunks++
		if _, tagged := metaOf(u.Raw)[turnIDKey]; tagged {
			t.Errorf("a chunk of a client that sends no turn ids is tagged: %s", u.Raw)
		}
	}
	if chunks == 0 {
		t.Fatal("the turn streamed no agent_message_chunk")
	}
}
