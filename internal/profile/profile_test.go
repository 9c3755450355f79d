package profile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
)

func write(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLeviathBlueprintIsMappedAndTheRestWarned(t *testing.T) {
	p, err := Load(write(t, "agent.leviath", `
[agent]
name = "coder"
entry_stage = "plan"
[stages.plan]
system_prompt = "Plan it."
model = { models = [{ provider = "openai", model = "gpt-5.5" }] }
max_iterations = 7
[stages.plan.transitions.build]
hint = "planned"
[stages.build]
system_prompt = "Build it."
[tool_permissions]
read_file = "allow"
shell = "ask"
write_file = "deny"
my_mcp_tool = "deny"
[limits]
interaction_timeout_secs = 0
max_depth = 4
max_cost = 3
[context.regions]
log = { kind = "pinned", seed = { command = "git log -3" } }
[[mcp_servers]]
name = "x"
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != "leviath" || p.Name != "coder" || p.System != "Plan it." || p.Model != "openai:gpt-5.5" || p.MaxTurnRequests != 7 || p.MaxDepth != 4 {
		t.Errorf("mapped %+v", p)
	}
	if p.InteractionTimeout >= 0 {
		t.Errorf("interaction_timeout_secs = 0 (wait forever) mapped to %v", p.InteractionTimeout)
	}
	if !slices.Equal(p.Allow, []string{"read"}) || !slices.Equal(p.Ask, []string{"shell"}) || !slices.Equal(p.Deny, []string{"my_mcp_tool", "write"}) {
		t.Errorf("rules allow %v ask %v deny %v", p.Allow, p.Ask, p.Deny)
	}
	if len(p.Seeds) != 1 || p.Seeds[0].Command != "git log -3" || p.Seeds[0].Region != "log" {
		t.Errorf("seeds %+v", p.Seeds)
	}
	warnings := strings.Join(p.Warnings, "\n")
	for _, want := range []string{`stage "build" is not run`, "transitions", "max_cost", "[mcp_servers]", "context regions (log)"} {
		if !strings.Contains(warnings, want) {
			t.Errorf("no warning about %q in:\n%s", want, warnings)
		}
	}
}

func TestCorvidProfileWarnsAboutUnknownKeys(t *testing.T) {
	p, err := Load(write(t, "r.toml", `
name = "r"
instructions = "Be terse."
colour = "blue"
seeds = [{ file = "A.md" }, { text = "hello" }]
[limits]
interaction_timeout = "90s"
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.InteractionTimeout != 90*time.Second || len(p.Seeds) != 2 || p.Seeds[1].Text != "hello" {
		t.Errorf("parsed %+v", p)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "colour") {
		t.Errorf("warnings %q, want one naming colour", p.Warnings)
	}
	missing := func(string) (string, error) { return "", os.ErrNotExist }
	ctx := p.Context(Spawn{Cwd: t.TempDir(), ReadFile: missing})
	if !strings.Contains(ctx, "Be terse.") || !strings.Contains(ctx, "could not read") || !strings.Contains(ctx, "hello") {
		t.Errorf("context:\n%s", ctx)
	}
}

func TestNoSeedCommandsRefusesOnlyCommands(t *testing.T) {
	p := &Profile{Name: "x", Trusted: true, Seeds: []Seed{{Region: "a", Command: "echo RAN-$((1+1))"}, {Region: "b", Text: "kept"}}}
	ctx := p.Context(Spawn{Cwd: t.TempDir(), NoCommands: true})
	if strings.Contains(ctx, "RAN-2") || !strings.Contains(ctx, "refused") || !strings.Contains(ctx, "kept") {
		t.Errorf("context:\n%s", ctx)
	}
	if ran := p.Context(Spawn{Cwd: t.TempDir()}); !strings.Contains(ran, "RAN-2") {
		t.Errorf("command seed did not run:\n%s", ran)
	}
}

// A profile that came with a project runs no seed command until `corvid
// trust` accepted it with its current content; the region says why.
func TestProjectBlueprintSeedCommandsRunOnlyWhenTrustedAsIs(t *testing.T) {
	env := config.MapEnv{"CORVID_HOME": t.TempDir()}
	ws := t.TempDir()
	blueprint := "[context.regions]\nstatus = { seed = { command = \"echo RAN-$((1+1))\" } }\n"
	path := filepath.Join(ws, LeviathFile)
	if err := os.WriteFile(path, []byte(blueprint), 0o644); err != nil {
		t.Fatal(err)
	}
	context := func() string {
		t.Helper()
		p, err := InDir(env, ws)
		if err != nil || p == nil {
			t.Fatalf("InDir: %v %v", p, err)
		}
		return p.Context(Spawn{Cwd: ws})
	}
	if ctx := context(); strings.Contains(ctx, "RAN-2") || !strings.Contains(ctx, "is not trusted") {
		t.Errorf("never trusted:\n%s", ctx)
	}
	if err := config.TrustFiles(env, TrustCandidates(ws)); err != nil {
		t.Fatal(err)
	}
	if ctx := context(); !strings.Contains(ctx, "RAN-2") {
		t.Errorf("trusted, but the command did not run:\n%s", ctx)
	}
	if err := os.WriteFile(path, []byte(blueprint+"# changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ctx := context(); strings.Contains(ctx, "RAN-2") || !strings.Contains(ctx, "changed since `corvid trust`") {
		t.Errorf("changed after trust:\n%s", ctx)
	}
}

// A stage's model is Leviath's ordered list, in each of the forms a
// blueprint writes it; what corvid cannot apply of it is named.
func TestLeviathStageModelListForms(t *testing.T) {
	for _, tc := range []struct {
		model    string
		want     []string
		fallback bool
		warn     string
	}{
		{`["anthropic/claude-haiku-4-5"]`, []string{"anthropic:claude-haiku-4-5"}, true, ""},
		{`["openai/gpt-5", "openrouter/anthropic/claude-sonnet-4.6"]`, []string{"openai:gpt-5", "openrouter:anthropic/claude-sonnet-4.6"}, true, ""},
		{`"anthropic:claude-haiku-4-5"`, []string{"anthropic:claude-haiku-4-5"}, true, ""},
		{`{ models = [{ provider = "google", model = "gemini-3.5-flash" }, { provider = "ollama", model = "qwen3.5:9b" }], allow_user_default = false, parameters = { temperature = 0.2 }, request_timeout_secs = 120 }`,
			[]string{"gemini:gemini-3.5-flash", "ollama:qwen3.5:9b"}, false, "model.parameters (temperature) are not applied"},
		{`42`, nil, true, "neither a model table, a list nor a string"},
	} {
		p, err := Load(write(t, "agent.leviath", "[stages.main]\nmodel = "+tc.model+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		if !slices.Equal(p.Models, tc.want) || p.ModelFallback != tc.fallback {
			t.Errorf("model = %s: Models %q fallback %v, want %q %v", tc.model, p.Models, p.ModelFallback, tc.want, tc.fallback)
		}
		if warnings := strings.Join(p.Warnings, "\n"); tc.warn != "" && !strings.Contains(warnings, tc.warn) {
			t.Errorf("model = %s: no warning %q in:\n%s", tc.model, tc.warn, warnings)
		}
	}
}

// A project's profile reads its system_prompt_file from the project only;
// the user's own profile reads it from anywhere.
func TestProjectProfilePromptFileStaysInTheProject(t *testing.T) {
	home, proj, outside := t.TempDir(), t.TempDir(), t.TempDir()
	env := config.MapEnv{"CORVID_HOME": home}
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("OUTSIDE-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(proj, ".corvid", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"inside.toml": "system_prompt_file = \"inside.md\"\n",
		"up.toml":     "system_prompt_file = \"../../../" + filepath.Base(outside) + "/secret.md\"\n",
		"abs.toml":    "system_prompt_file = \"" + filepath.Join(outside, "secret.md") + "\"\n",
		"link.toml":   "system_prompt_file = \"link.md\"\n",
		"inside.md":   "INSIDE-PROMPT",
	} {
		if err := os.WriteFile(filepath.Join(agents, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(agents, "link.md")); err != nil {
		t.Fatal(err)
	}
	file := &config.File{ProjectDir: proj, ProjectTrusted: true}
	if p, err := Resolve(env, file, "inside"); err != nil || p.System != "INSIDE-PROMPT" {
		t.Fatalf("inside: %v %v", p, err)
	}
	for _, name := range []string{"up", "abs", "link"} {
		p, err := Resolve(env, file, name)
		if err == nil || !strings.Contains(err.Error(), "outside the project") {
			t.Errorf("%s: %v, err %v; want refused as outside the project", name, p, err)
		}
	}
	// The user's own profile may name any file.
	userAgents := filepath.Join(home, "config", "agents")
	if err := os.MkdirAll(userAgents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userAgents, "mine.toml"), []byte("system_prompt_file = \""+filepath.Join(outside, "secret.md")+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := Resolve(env, file, "mine"); err != nil || p.System != "OUTSIDE-SECRET" {
		t.Errorf("the user's own profile: %v %v", p, err)
	}
}
