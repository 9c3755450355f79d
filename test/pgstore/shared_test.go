package pgstore

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// One history, two machines: a turn streamed by corvid with one home and
// --store URL is loaded, whole, by another corvid with another home and
// CORVID_STORE=URL, and that one continues the session.
func TestTwoHomesShareOneHistoryThroughPostgres(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := testkit.WriteScript(t, map[string]any{
		"onExhausted": "repeat-last",
		"responses": []any{map[string]any{"chunkSize": 3,
			"parts": []any{map[string]any{"type": "text", "text": "shared history ", "repeat": 40}}}},
	})
	a := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)
	a.MustCall(a.ctx, "session/prompt", testkit.TextPrompt(sid, "first, on machine A"), nil)
	shown := text(a.Updates(sid))
	if want := strings.Repeat("shared history ", 40); shown != want {
		t.Fatalf("A showed %q, want the scripted answer", shown)
	}
	if code, _ := a.Close(); code != 0 {
		t.Fatalf("A exited %d:\n%s", code, a.Stderr())
	}

	b := start(t, script, workspace, nil, "CORVID_STORE="+url)
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
	}
	b.MustCall(b.ctx, "session/list", map[string]any{"cwd": workspace}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid {
		t.Fatalf("session/list on B (another home, same store) = %+v, want A's session %s", list.Sessions, sid)
	}
	replay := b.load(t, sid, workspace)
	var prompts []string
	for _, u := range replay {
		if u.SessionUpdate == "user_message_chunk" {
			prompts = append(prompts, u.Content.Text)
		}
	}
	if got := text(replay); got != shown || len(prompts) != 1 || prompts[0] != "first, on machine A" {
		t.Fatalf("B (another home, same store) replayed prompts %q and text %q; want A's prompt and the %d bytes A showed", prompts, got, len(shown))
	}
	before := len(b.Updates(sid))
	b.MustCall(b.ctx, "session/prompt", testkit.TextPrompt(sid, "second, on machine B"), nil)
	if got := text(b.Updates(sid)[before:]); got != shown {
		t.Errorf("B's own turn showed %q", got)
	}
	// sessions list, on a third home, sees the session.
	bin := corvidBin(t)
	cmd := exec.Command(bin, "sessions", "list", "--all", "--store", url)
	cmd.Env = append(cmd.Environ(), "CORVID_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), sid) {
		t.Errorf("corvid sessions list --store URL = %v\n%s\nwant session %s", err, out, sid)
	}
}

// kill -9 of a daemon in the middle of a turn: another daemon (another
// home) loads at least everything the client had been shown, in order.
func TestKill9MidTurnLosesNothingShown(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := testkit.WriteScript(t, map[string]any{
		"responses": []any{map[string]any{"chunkSize": 1, "delayMs": 2,
			"parts": []any{map[string]any{"type": "text", "text": "0123456789", "repeat": 200}}}},
	})
	a := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)
	a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream"))
	deadline := time.Now().Add(30 * time.Second)
	for len(text(a.Updates(sid))) < 300 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	a.Kill()
	shown := text(a.Updates(sid))
	if len(shown) < 300 || len(shown) >= 2000 {
		t.Fatalf("A showed %d bytes before kill -9; want a turn cut in the middle", len(shown))
	}

	b := start(t, script, workspace, nil, "CORVID_STORE="+url)
	got := text(b.load(t, sid, workspace))
	if !strings.HasPrefix(got, shown) {
		t.Fatalf("after kill -9, B loaded %d bytes that do not begin with the %d A showed", len(got), len(shown))
	}
	t.Logf("A showed %d bytes, B loaded %d", len(shown), len(got))
}

// A prompt on machine B while machine A runs a turn of the session is
// refused as two processes on one SQLite file refuse it: -32602, saying
// another corvid process holds the session.
func TestPromptWhileAnotherMachineRunsATurnIsRefused(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := testkit.WriteScript(t, map[string]any{
		"onExhausted": "repeat-last",
		"responses": []any{map[string]any{"chunkSize": 1, "delayMs": 2,
			"parts": []any{map[string]any{"type": "text", "text": "0123456789", "repeat": 100}}}},
	})
	a := start(t, script, workspace, []string{"--store", url})
	b := start(t, script, workspace, nil, "CORVID_STORE="+url)
	sid := a.NewSession(a.ctx, workspace)
	a.MustCall(a.ctx, "session/prompt", testkit.TextPrompt(sid, "warm up"), nil)
	b.load(t, sid, workspace)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "long turn"))
	deadline := time.Now().Add(30 * time.Second)
	for len(text(a.Updates(sid))) < 1100 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	_, rerr := b.Call(b.ctx, "session/prompt", testkit.TextPrompt(sid, "meanwhile on B"))
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message+string(rerr.Data), "another corvid process") {
		t.Fatalf("B's prompt during A's turn = %v, want -32602 naming another corvid process", rerr)
	}
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
}

// corvid store migrate copies a SQLite store's sessions into PostgreSQL,
// verifies them, copies nothing the second time, and the session then
// loads from the PostgreSQL store on another home.
func TestStoreMigrateFromSQLite(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := testkit.WriteScript(t, map[string]any{
		"responses": []any{map[string]any{"chunkSize": 4,
			"parts": []any{map[string]any{"type": "text", "text": "kept on sqlite ", "repeat": 30}}}},
	})
	home := t.TempDir()
	bin := corvidBin(t)
	e := testkit.Start(t, bin, testkit.Options{Args: []string{"acp", "-m", "script:" + script}, Dir: workspace, Env: []string{"CORVID_HOME=" + home}})
	ctx := t.Context()
	if _, rerr := e.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := e.NewSession(ctx, workspace)
	e.MustCall(ctx, "session/prompt", testkit.TextPrompt(sid, "on the file"), nil)
	shown := text(e.Updates(sid))
	e.Close()

	migrate := func() string {
		cmd := exec.Command(bin, "store", "migrate", "--from", "sqlite:"+home+"/sessions.db", "--to", url)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("corvid store migrate: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := migrate(); !strings.Contains(out, "created 1 of 1 sessions") || !strings.Contains(out, "content hashes match") {
		t.Fatalf("first migrate said:\n%s", out)
	}
	if out := migrate(); !strings.Contains(out, "Copied 0 events, created 0 of 1") || !strings.Contains(out, "content hashes match") {
		t.Fatalf("second migrate said:\n%s", out)
	}
	b := start(t, script, workspace, nil, "CORVID_STORE="+url)
	if got := text(b.load(t, sid, workspace)); got != shown {
		t.Fatalf("loaded from PostgreSQL after migrate: %q, want %q", got, shown)
	}
}
