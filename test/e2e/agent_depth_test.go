package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	fa "github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
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

// --max-depth 0 means no sub-agents, even when the blueprint allows one
// level: _meta reports maxDepth 0, the model is offered no task tool, and
// a second process without the flag keeps it so for the stored session.
func TestMaxDepthZeroOffersNoSubAgents(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "deep.leviath")
	if err := os.WriteFile(prof, []byte("[agent]\nname = \"deep\"\n[limits]\nmax_depth = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home, ws := t.TempDir(), t.TempDir()
	api := fa.New(t)
	start := func(args ...string) *session {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		t.Cleanup(cancel)
		e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Dir: ws, Args: append([]string{"acp"}, args...),
			Env: []string{"ANTHROPIC_API_KEY=sk-ant-e2e", "ANTHROPIC_BASE_URL=" + api.URL(), "CORVID_KEYRING=off", "CORVID_HOME=" + home}})
		s := &session{Editor: e, ctx: ctx, workspace: ws}
		if _, rerr := s.Initialize(ctx, testkit.Zed()); rerr != nil {
			t.Fatalf("initialize: %v", rerr)
		}
		return s
	}
	offersTask := func(s *session, sid string) bool {
		t.Helper()
		api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("ok")}})
		if stop, rerr := s.Prompt(s.ctx, sid, "hi"); rerr != nil || stop != "end_turn" {
			t.Fatalf("prompt: %q %v\n%s", stop, rerr, s.Stderr())
		}
		reqs := api.Requests()
		for _, tl := range reqs[len(reqs)-1].Body.Tools {
			if tl.Name == "task" {
				return true
			}
		}
		return false
	}

	// The blueprint alone: one level of sub-agents.
	s := start("--agent", prof)
	raw := s.MustCall(s.ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}, nil)
	if m := agentMeta(t, raw); m["maxDepth"] != float64(1) {
		t.Fatalf("without the flag: _meta corvid.dev/agent = %v, want maxDepth 1", m)
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(raw, &res)
	if !offersTask(s, res.SessionID) {
		t.Fatal("the blueprint's max_depth = 1 offers no task tool; this test could not see one missing")
	}
	s.Close()

	s = start("--agent", prof, "--max-depth", "0")
	raw = s.MustCall(s.ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}, nil)
	if m := agentMeta(t, raw); m["name"] != "deep" || m["maxDepth"] != float64(0) {
		t.Errorf("--max-depth 0: _meta corvid.dev/agent = %v, want name deep, maxDepth 0", m)
	}
	_ = json.Unmarshal(raw, &res)
	sid := res.SessionID
	if offersTask(s, sid) {
		t.Error("--max-depth 0 still offers the task tool")
	}
	s.Close()

	// Loaded by a process without --agent or --max-depth: still none.
	s = start()
	raw = s.MustCall(s.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}, nil)
	if m := agentMeta(t, raw); m["maxDepth"] != float64(0) {
		t.Errorf("session/load: _meta corvid.dev/agent = %v, want maxDepth 0", m)
	}
	if offersTask(s, sid) {
		t.Error("the stored session offers the task tool again after a reload")
	}
}
