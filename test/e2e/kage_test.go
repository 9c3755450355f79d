package e2e

// A kage client (docs/kage.md) replays the config option values it stored:
// kage's thinking levels and modes. corvid accepts them, maps them onto its
// own values (config.OptionAlias), and keeps showing its own.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/fakeopenai"
)

func TestKageClientReplaysItsStoredOptionValues(t *testing.T) {
	s := startCorvid(t, text("unused", 0), testkit.Options{})
	sid := s.ready(t, testkit.Minimal())
	for _, c := range []struct{ id, value, wantID, want string }{
		{"mode", "allow", "mode", "yolo"},
		{"mode", "ask", "mode", "ask"},
		{"mode", "deny", "mode", "deny"},
		{"mode", "default", "mode", "default"},
		{"thinking", "xhigh", "thought_level", "max"},
		{"thinking", "minimal", "thought_level", "low"},
		{"thinking", "off", "thought_level", "off"},
		{"thinking", "default", "thought_level", "high"},
		{"thought_level", "xhigh", "thought_level", "max"},
		{"thought_level", "medium", "thought_level", "medium"},
	} {
		opts, rerr := s.setOption(t, sid, c.id, c.value)
		if rerr != nil {
			t.Errorf("set %s=%s (a kage value): %v", c.id, c.value, rerr)
			continue
		}
		if got := currentValues(opts)[c.wantID]; got != c.want {
			t.Errorf("set %s=%s: %s is now %q, want corvid's %q", c.id, c.value, c.wantID, got, c.want)
		}
		for _, o := range opts {
			for _, kageOnly := range []string{"allow", "xhigh", "minimal"} {
				if slices.Contains(o.values(), kageOnly) {
					t.Errorf("option %s lists kage's value %q; configOptions show corvid's own values", o.ID, kageOnly)
				}
			}
		}
	}
	if _, rerr := s.setOption(t, sid, "mode", "reckless"); rerr == nil || rerr.Code != -32602 {
		t.Errorf("an unknown mode answered %v, want -32602", rerr)
	}
}

// TestKageDenyModeRefusesEveryCallWithoutAsking: kage's deny mode (corvid's
// deny) refuses even a read, and the client is never asked.
func TestKageDenyModeRefusesEveryCallWithoutAsking(t *testing.T) {
	s := startCorvid(t, toolScript("read", map[string]any{"path": "notes.txt"}), testkit.Options{Permission: testkit.AllowOnce()})
	sid := s.ready(t, testkit.Minimal())
	if err := os.WriteFile(filepath.Join(s.workspace, "notes.txt"), []byte("secret 4711\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, rerr := s.setOption(t, sid, "mode", "deny"); rerr != nil {
		t.Fatalf("set mode=deny: %v", rerr)
	}
	if stop, rerr := s.Prompt(s.ctx, sid, "read it"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if st := finalToolStatus(s.Updates(sid)); st != "failed" {
		t.Errorf("the read ended %q in deny mode, want failed", st)
	}
	if n := len(s.Permissions()); n != 0 {
		t.Errorf("%d permission requests in deny mode, want none", n)
	}
}

// TestKageAllowModeFlagStartsInYolo: --mode allow (kage's word) starts
// sessions in corvid's yolo.
func TestKageAllowModeFlagStartsInYolo(t *testing.T) {
	s := startCorvid(t, text("unused", 0), testkit.Options{}, "--mode", "allow")
	if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
		t.Fatal(rerr)
	}
	if got := currentValues(s.newSetup(t).ConfigOptions)["mode"]; got != "yolo" {
		t.Errorf("--mode allow started the session in %q, want yolo", got)
	}
}

// TestImportKageThenServeWithItsProviderAndStoredKey: a kage user's
// config.toml (a [providers.zai] override with a header) and auth.json (a
// stored zai key) go through `corvid import kage --yes`; then `corvid acp
// -m zai:glm-4.6`, with no key in the environment, reaches the endpoint
// with the imported key and header.
func TestImportKageThenServeWithItsProviderAndStoredKey(t *testing.T) {
	const key = "zai-imported-secret-42"
	api := fakeopenai.New(t)
	env, home := testkit.IsolatedEnv(t, "CORVID_KEYRING=off")
	files := map[string]string{
		filepath.Join(home, ".config", "kage", "config.toml"):       "[provider]\ndefault_model = \"zai:glm-4.6\"\n\n[providers.zai]\nbase_url = \"" + api.BaseURL() + "\"\n\n[providers.zai.headers]\nX-Team = \"infra\"\n",
		filepath.Join(home, ".local", "share", "kage", "auth.json"): `{"version":2,"providers":{"zai":{"type":"api_key","key":"` + key + `"}}}`,
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := testkit.BuildCorvid(t)
	cmd := exec.Command(bin, "import", "kage", "--yes")
	cmd.Env, cmd.Dir = env, home
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("corvid import kage --yes: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), key) {
		t.Errorf("the import printed the key:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "key of zai") || !strings.Contains(out.String(), "provider zai (override)") {
		t.Errorf("the import did not say what it copies:\n%s", out.String())
	}

	api.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("imported ok")}})
	e := testkit.Start(t, bin, testkit.Options{Args: []string{"acp"}, Env: env, Dir: home})
	s := &session{Editor: e, ctx: t.Context(), workspace: home}
	sid := s.ready(t, testkit.Minimal())
	if stop, rerr := s.Prompt(s.ctx, sid, "hi"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	reqs := api.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests reached the imported endpoint, want 1", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("Authorization %q, want the imported key", got)
	}
	if got := reqs[0].Header.Get("X-Team"); got != "infra" {
		t.Errorf("X-Team %q, want the imported header", got)
	}
	if got := reqs[0].Body["model"]; got != "glm-4.6" {
		t.Errorf("model %v, want glm-4.6 from kage's default_model", got)
	}
}

// startLaunchLine serves ACP with the scripted model under a launch line
// whose first word is word (acp, rpc, agent-client), then flags; env adds
// to the agent's isolated environment.
func startLaunchLine(t *testing.T, script any, env []string, word string, flags ...string) *session {
	t.Helper()
	workspace := t.TempDir()
	opts := testkit.Options{Permission: testkit.AllowOnce(), Dir: workspace, Env: env}
	opts.Args = append([]string{word, "-m", "script:" + testkit.WriteScript(t, script)}, flags...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &session{Editor: testkit.Start(t, testkit.BuildCorvid(t), opts), ctx: ctx, workspace: workspace}
}

// readInWorkspace starts a launch line, has Zed (which advertises fs and
// terminal) open a session, and lets the model read a file inside the
// session's directory. It returns how many permission questions and fs/*
// calls the read caused.
func readInWorkspace(t *testing.T, word string, flags ...string) (questions, fsCalls int) {
	t.Helper()
	s := startLaunchLine(t, toolScript("read", map[string]any{"path": "notes.txt"}), nil, word, flags...)
	if err := os.WriteFile(filepath.Join(s.workspace, "notes.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "read notes.txt"); rerr != nil || stop != "end_turn" {
		t.Fatalf("%s %v: prompt: %q %v", word, flags, stop, rerr)
	}
	if st := finalToolStatus(s.Updates(sid)); st != "completed" {
		t.Errorf("%s %v: the read ended %q, want completed (the question is answered allow)", word, flags, st)
	}
	return len(s.Permissions()), len(s.FSCalls())
}

// TestKageLaunchLineAsksAndKeepsToolsInProcess: kage's document says tool
// calls surface as permission prompts ("kage never auto-approves") and
// kage never asks for the client's fs or terminal. So `corvid rpc` (kage's
// line) starts sessions in ask mode with --client-tools never: a read inside
// the cwd asks, and runs in-process although Zed advertises fs. Flags and
// config still say otherwise, and the other aliases keep their defaults.
func TestKageLaunchLineAsksAndKeepsToolsInProcess(t *testing.T) {
	for _, c := range []struct {
		word      string
		flags     []string
		questions int
		fs        bool
	}{
		{"rpc", nil, 1, false},
		{"acp", nil, 0, true},
		{"agent-client", nil, 0, true},
		{"rpc", []string{"--mode", "default"}, 0, false},
		{"rpc", []string{"--yolo"}, 0, false},
		{"rpc", []string{"--client-tools", "auto"}, 1, true},
		{"acp", []string{"--client-tools", "never"}, 0, false},
	} {
		t.Run(strings.Join(append([]string{c.word}, c.flags...), " "), func(t *testing.T) {
			q, fs := readInWorkspace(t, c.word, c.flags...)
			if q != c.questions {
				t.Errorf("%d permission questions for a read in the cwd, want %d", q, c.questions)
			}
			if (fs > 0) != c.fs {
				t.Errorf("%d fs/* calls to a client that advertises fs, want any: %v", fs, c.fs)
			}
		})
	}
}

// TestKageLaunchLineTakesDefaultModeFromConfig: default_mode in config.toml
// is "config says otherwise" for kage's line too.
func TestKageLaunchLineTakesDefaultModeFromConfig(t *testing.T) {
	cfgHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgHome, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "config", "config.toml"), []byte("default_mode = \"edit\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"CORVID_HOME=" + cfgHome}, "edit"},
		{nil, "ask"},
	} {
		s := startLaunchLine(t, text("unused", 0), c.env, "rpc")
		if _, rerr := s.Initialize(s.ctx, testkit.Minimal()); rerr != nil {
			t.Fatal(rerr)
		}
		if got := currentValues(s.newSetup(t).ConfigOptions)["mode"]; got != c.want {
			t.Errorf("corvid rpc with config %v started in %q, want %s", c.env, got, c.want)
		}
	}
}

// TestKageLaunchLineRunsShellInProcess: kage never asks for the client's
// terminal, so under `corvid rpc` a shell call runs in-process although Zed
// advertises terminal: no terminal/* request, and the output is in the tool
// call. The call asks first (ask mode) and the answer allows it.
func TestKageLaunchLineRunsShellInProcess(t *testing.T) {
	s := startLaunchLine(t, toolScript("shell", map[string]any{"command": "echo from-kage-line"}), nil, "rpc")
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "run"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if n := len(s.TerminalCalls()); n != 0 {
		t.Errorf("%d terminal/* calls under corvid rpc, want none", n)
	}
	if n := len(s.Permissions()); n != 1 {
		t.Errorf("%d permission questions for the shell call, want 1", n)
	}
	var out string
	for _, u := range testkit.OfKind(s.Updates(sid), "tool_call_update") {
		out += string(u.Raw)
	}
	if !strings.Contains(out, "from-kage-line") || finalToolStatus(s.Updates(sid)) != "completed" {
		t.Errorf("the shell call did not run in-process to completion: %s", out)
	}
}
