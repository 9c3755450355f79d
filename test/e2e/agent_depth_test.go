package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// agentMeta is the corvid.dev/agent entry of a session/new or load
// response's _meta (nil when absent).
func agentMeta(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var res struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("response %s: %v", raw, err)
	}
	m, _ := res.Meta["corvid.dev/agent"].(map[string]any)
	return m
}

// --max-depth N overrides the profile's sub-agent depth, and the session
// keeps it: session/new shows it in _meta, `corvid sessions show` prints it,
// and a second process (launched without --agent) loads it from the store.
func TestAgentMaxDepthIsStoredAndShownWithTheSession(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	prof := filepath.Join(t.TempDir(), "deep.toml")
	if err := os.WriteFile(prof, []byte("name = \"deep\"\ndescription = \"Goes deep.\"\n[limits]\nmax_depth = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := testkit.Options{Dir: ws, Env: []string{"CORVID_HOME=" + home}}
	s := startCorvid(t, text("ok", 0), opts, "--agent", prof, "--max-depth", "3")
	if _, rerr := s.Initialize(s.ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	raw := s.MustCall(s.ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}, nil)
	m := agentMeta(t, raw)
	if m["name"] != "deep" || m["maxDepth"] != float64(3) {
		t.Fatalf("session/new _meta corvid.dev/agent = %v, want name deep, maxDepth 3 (the flag over the profile's 1):\n%s", m, raw)
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(raw, &res)
	sid := res.SessionID
	if code, _ := s.Close(); code != 0 {
		t.Fatalf("exit %d\n%s", code, s.Stderr())
	}

	show := func(when string) {
		t.Helper()
		cmd := exec.Command(testkit.BuildCorvid(t), "sessions", "show", sid)
		cmd.Env = s.Env()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sessions show: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "Agent deep, max sub-agent depth 3") {
			t.Errorf("sessions show %s does not name the agent and its depth:\n%s", when, out)
		}
	}
	show("after session/new")

	s2 := startCorvid(t, text("ok", 0), opts)
	if _, rerr := s2.Initialize(s2.ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	raw = s2.MustCall(s2.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}, nil)
	if m := agentMeta(t, raw); m["name"] != "deep" || m["maxDepth"] != float64(3) {
		t.Errorf("session/load in a second process: _meta corvid.dev/agent = %v, want name deep, maxDepth 3:\n%s", m, raw)
	}
	// Saving the session's settings again (a mode change) keeps them.
	s2.MustCall(s2.ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "edit"}, nil)
	if code, _ := s2.Close(); code != 0 {
		t.Fatalf("exit %d\n%s", code, s2.Stderr())
	}
	show("after a mode change in a process without --agent")
}
