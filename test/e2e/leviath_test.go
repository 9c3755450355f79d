package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	fa "github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// coderBlueprint is a Leviath agent.leviath (the manifest format of GEMISIS/leviath
// docs/content/blueprint-format.md, "Migrating from agent.leviath"), with a command seed,
// a files seed, a caller-seeded region corvid cannot honour, and a deny rule.
const coderBlueprint = `
[agent]
name = "coder"
version = "0.1.0"
description = "Writes code carefully."

[context.regions]
status = { kind = "pinned", budget = "10%", seed = { command = "echo SEEDED-$((40+2))" } }
notes = { kind = "pinned", budget = "10%", seed = { files = ["NOTES.md"] } }
task = { kind = "pinned", max_tokens = 2000, seed = "task", required = true }

[tool_permissions]
write_file = "deny"
read_file = "allow"

[limits]
interaction_timeout_secs = 120

[stages.main]
model = { models = [{ provider = "anthropic", model = "claude-sonnet-4-6" }] }
system_prompt = "You are CODER-BLUEPRINT-PROMPT."
available_tools = ["read_file", "write_file"]
`

// startLeviath serves corvid with Leviath's launch line on the fake Anthropic API; the
// user's config dir (CORVID_HOME/config) holds agents/coder.leviath and the workspace NOTES.md.
func startLeviath(t *testing.T, api *fa.Server, args ...string) (*session, string) {
	t.Helper()
	corvidHome := t.TempDir() // its config dir is corvidHome/config
	if err := os.MkdirAll(filepath.Join(corvidHome, "config", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corvidHome, "config", "agents", "coder.leviath"), []byte(coderBlueprint), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "NOTES.md"), []byte("NOTES-FILE-CONTENT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{
		Args: args,
		Env:  []string{"ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off", "CORVID_HOME=" + corvidHome},
		Dir:  ws,
	})
	s := &session{Editor: e, ctx: ctx, workspace: ws}
	if _, rerr := s.Initialize(s.ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	return s, corvidHome
}

// Leviath's documented launch line, exactly: the installed blueprint's prompt, model and
// seeds reach the model, its deny holds under --yolo, and what corvid cannot honour is
// named on stderr and in the session.
func TestLeviathLaunchLineServesTheInstalledBlueprint(t *testing.T) {
	api := fa.New(t)
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.ToolUse("toolu_w1", "write", `{"path":"x.txt","content":"y"}`)}},
		fa.Response{Blocks: []fa.Block{fa.Text("done")}},
	)
	s, _ := startLeviath(t, api, "agent-client", "--agent", "coder", "--yolo")
	sid := s.NewSession(s.ctx, s.workspace)
	if stop, rerr := s.Prompt(s.ctx, sid, "write x"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	reqs := api.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was never called")
	}
	if reqs[0].Body.Model != "claude-sonnet-4-6" {
		t.Errorf("model %q, want the blueprint's claude-sonnet-4-6", reqs[0].Body.Model)
	}
	sys := reqs[0].SystemText()
	for _, want := range []string{"You are CODER-BLUEPRINT-PROMPT.", "SEEDED-42", "NOTES-FILE-CONTENT", `region="status"`} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if _, err := os.Stat(filepath.Join(s.workspace, "x.txt")); err == nil {
		t.Error("write ran although the blueprint denies write_file (a deny is never lifted by --yolo)")
	}
	if n := len(s.Permissions()); n != 0 {
		t.Errorf("%d permission requests under --yolo", n)
	}
	// The caller-seeded region and the unused available_tools are named, not dropped.
	if !strings.Contains(s.Stderr(), `region \"task\" is seeded by the caller`) && !strings.Contains(s.Stderr(), `region "task" is seeded by the caller`) {
		t.Errorf("stderr does not warn about the caller-seeded region:\n%s", s.Stderr())
	}
	notices := testkit.TextOf(s.Updates(sid), "agent_message_chunk")
	if !strings.Contains(notices, "available_tools") || !strings.Contains(notices, `"task"`) {
		t.Errorf("the session was not told what the blueprint asks for and corvid does not do:\n%s", notices)
	}
}

func TestLeviathFlagsAreAcceptedAndNoSeedCommandsRefusesCommandSeeds(t *testing.T) {
	api := fa.New(t)
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("ok")}})
	s, _ := startLeviath(t, api, "agent-client", "--agent", "coder", "--yolo", "--max-depth", "3",
		"--no-seed-commands", "--output-format", "markdown", "--output-instructions", "Be brief.")
	sid := s.NewSession(s.ctx, s.workspace)
	if stop, rerr := s.Prompt(s.ctx, sid, "hi"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	sys := api.Requests()[0].SystemText()
	if strings.Contains(sys, "SEEDED-42") {
		t.Error("the command seed ran under --no-seed-commands")
	}
	if !strings.Contains(sys, "refused: corvid was started with --no-seed-commands") || !strings.Contains(sys, "NOTES-FILE-CONTENT") {
		t.Errorf("the command region does not say it was refused, or the file seed is missing:\n%s", sys)
	}
}

// Leviath's rule: with no --agent, a session whose cwd holds an agent.leviath uses it.
func TestCwdAgentLeviathIsUsedWithoutAgentFlag(t *testing.T) {
	api := fa.New(t)
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.ToolUse("toolu_w1", "write", `{"path":"x.txt","content":"y"}`)}},
		fa.Response{Blocks: []fa.Block{fa.Text("ok")}},
	)
	s, _ := startLeviath(t, api, "agent-client", "--yolo", "-m", "anthropic:claude-haiku-4-5")
	if err := os.WriteFile(filepath.Join(s.workspace, "agent.leviath"), []byte(coderBlueprint), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := s.NewSession(s.ctx, s.workspace)
	if stop, rerr := s.Prompt(s.ctx, sid, "hi"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	sys := api.Requests()[0].SystemText()
	for _, want := range []string{"You are CODER-BLUEPRINT-PROMPT.", "NOTES-FILE-CONTENT", "is not trusted"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q from the cwd's agent.leviath:\n%s", want, sys)
		}
	}
	// The blueprint came with the directory: its seed command runs only
	// once `corvid trust` accepted it (test/security has the attack).
	if strings.Contains(sys, "SEEDED-42") {
		t.Errorf("the command seed of a never-trusted agent.leviath ran:\n%s", sys)
	}
	// The blueprint's deny holds for the session in its directory, even under --yolo.
	if _, err := os.Stat(filepath.Join(s.workspace, "x.txt")); err == nil {
		t.Error("write ran although the cwd's agent.leviath denies write_file")
	}
	// A session elsewhere gets the default agent, and its write runs.
	otherDir := t.TempDir()
	other := s.NewSession(s.ctx, otherDir)
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.ToolUse("toolu_w2", "write", `{"path":"x.txt","content":"y"}`)}},
		fa.Response{Blocks: []fa.Block{fa.Text("ok")}},
	)
	if stop, rerr := s.Prompt(s.ctx, other, "hi"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if sys := api.Requests()[2].SystemText(); strings.Contains(sys, "CODER-BLUEPRINT") {
		t.Error("a session outside the blueprint's directory got the blueprint")
	}
	if _, err := os.Stat(filepath.Join(otherDir, "x.txt")); err != nil {
		t.Errorf("the write outside the blueprint's directory did not run under --yolo: %v", err)
	}
}

func TestAgentsListAndShow(t *testing.T) {
	env, home := testkit.IsolatedEnv(t)
	agents := filepath.Join(home, ".corvid", "config", "agents") // CORVID_HOME/config
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "coder.leviath"), []byte(coderBlueprint), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := "name = \"reviewer\"\ndescription = \"Reviews diffs.\"\nmodel = \"anthropic:claude-haiku-4-5\"\ninstructions = \"Be terse.\"\nseed = { command = \"git status\" }\n[permissions]\ndeny = [\"write\"]\n[limits]\nmax_depth = 2\n"
	if err := os.WriteFile(filepath.Join(agents, "reviewer.toml"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command(testkit.BuildCorvid(t), args...)
		cmd.Env, cmd.Dir = env, t.TempDir()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("corvid %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	list := run("agents", "list")
	for _, want := range []string{"coder", "reviewer", "user", "coder.leviath", "reviewer.toml"} {
		if !strings.Contains(list, want) {
			t.Errorf("agents list lacks %q:\n%s", want, list)
		}
	}
	show := run("agents", "show", "reviewer")
	for _, want := range []string{"anthropic:claude-haiku-4-5", "deny:", "write", "max depth:    2", "seed1: command git status"} {
		if !strings.Contains(show, want) {
			t.Errorf("agents show reviewer lacks %q:\n%s", want, show)
		}
	}
	show = run("agents", "show", "coder")
	for _, want := range []string{"format:       leviath", "anthropic:claude-sonnet-4-6", "status: command echo", "warning:"} {
		if !strings.Contains(show, want) {
			t.Errorf("agents show coder lacks %q:\n%s", want, show)
		}
	}
	cmd := exec.Command(testkit.BuildCorvid(t), "acp", "--agent", "nobody")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `no such agent "nobody"`) {
		t.Errorf("--agent nobody: %v\n%s", err, out)
	}
}

// A stage's model is Leviath's ordered list (GEMISIS/leviath docs/content/agents.md,
// "Stages and models": the first configured provider wins, then the user's default), in
// the list form the issue used and in Leviath's table form; what corvid cannot apply
// of it is named on stderr and in the session.
func TestBlueprintModelListPicksTheFirstUsableModel(t *testing.T) {
	for _, tc := range []struct{ name, model, warning string }{
		{"list", `["anthropic/claude-haiku-4-5"]`, ""},
		{"fallback", `{ models = [{ provider = "openai", model = "gpt-5" }, { provider = "anthropic", model = "claude-haiku-4-5" }], parameters = { temperature = 0.2 } }`,
			"model.parameters (temperature) are not applied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fa.New(t)
			api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("ok")}})
			prof := filepath.Join(t.TempDir(), "agent.leviath")
			if err := os.WriteFile(prof, []byte("[agent]\nname = \"haiku\"\n[stages.main]\nmodel = "+tc.model+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s, _ := startLeviath(t, api, "agent-client", "--agent", prof)
			sid := s.NewSession(s.ctx, s.workspace)
			if stop, rerr := s.Prompt(s.ctx, sid, "hi"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v\n%s", stop, rerr, s.Stderr())
			}
			if got := api.Requests()[0].Body.Model; got != "claude-haiku-4-5" {
				t.Errorf("model %q, want the blueprint's first usable claude-haiku-4-5", got)
			}
			if tc.warning == "" {
				return
			}
			if !strings.Contains(s.Stderr(), tc.warning) {
				t.Errorf("stderr does not warn %q:\n%s", tc.warning, s.Stderr())
			}
			if notices := testkit.TextOf(s.Updates(sid), "agent_message_chunk"); !strings.Contains(notices, tc.warning) {
				t.Errorf("the session was not told %q:\n%s", tc.warning, notices)
			}
		})
	}
}
