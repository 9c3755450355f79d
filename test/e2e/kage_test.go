package e2e

// A kage client (docs/kage.md) replays the config option values it stored:
// kage's thinking levels and modes. corvid accepts them, maps them onto its
// own values (config.OptionAlias), and keeps showing its own.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
