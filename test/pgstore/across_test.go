package pgstore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// as is a host that initializes with clientInfo {name, version}.
func as(name, version string) testkit.Host {
	return testkit.Host{Name: name, Params: map[string]any{
		"protocolVersion":    1,
		"clientCapabilities": map[string]any{},
		"clientInfo":         map[string]any{"name": name, "version": version},
	}}
}

// answeredUpdate waits until m was shown a tool_call_update of session
// sid with _meta corvid.dev/answeredBy and returns that update.
func answeredUpdate(t *testing.T, m *machine, sid string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, u := range m.Updates(sid) {
			if u.SessionUpdate != "tool_call_update" {
				continue
			}
			var raw map[string]any
			if json.Unmarshal(u.Raw, &raw) != nil {
				continue
			}
			if meta, _ := raw["_meta"].(map[string]any); meta != nil && meta["corvid.dev/answeredBy"] != nil {
				return raw
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no tool_call_update with corvid.dev/answeredBy in session %s", sid)
	return nil
}

func answeredBy(u map[string]any) map[string]any {
	by, _ := u["_meta"].(map[string]any)["corvid.dev/answeredBy"].(map[string]any)
	return by
}

// A question of a turn on daemon A answered by a client of daemon B: B's
// session/list shows it waiting while it is open, and the clients of both
// daemons are told the call's outcome with B's client's clientInfo as
// corvid.dev/answeredBy (the answer crossed the store with who gave it).
func TestAnsweredByCrossesDaemons(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := editScript(t)
	da := serveDaemon(t, script, workspace, url)
	db := serveDaemon(t, script, workspace, url)
	a := da.clientAs(t, workspace, as("client-a", "1.0"), testkit.HoldPermission(nil, nil)) // never answers
	release := make(chan struct{})
	b := db.clientAs(t, workspace, as("client-b", "2.0"), testkit.HoldPermission(release, testkit.AllowOnce()))
	sid := a.NewSession(a.ctx, workspace)
	b.load(t, sid, workspace)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "write the notes"))
	if _, err := b.WaitPermission(b.ctx); err != nil {
		t.Fatalf("B's client was not asked A's question: %v", err)
	}
	if w, _ := listMeta(t, b, sid)["corvid.dev/waiting"].([]any); len(w) != 1 {
		t.Fatalf("B's session/list while A's question is open: waiting %v", listMeta(t, b, sid))
	}
	close(release)
	if res, rerr := p.Wait(a.ctx); rerr != nil || !strings.Contains(string(res), "end_turn") {
		t.Fatalf("A's turn after B's answer: %s %v", res, rerr)
	}
	if got, err := os.ReadFile(filepath.Join(workspace, "notes.txt")); err != nil || string(got) != "written by corvid\n" {
		t.Fatalf("notes.txt after B allowed it: %q %v", got, err)
	}
	for name, m := range map[string]*machine{"A": a, "B": b} {
		if by := answeredBy(answeredUpdate(t, m, sid)); by["name"] != "client-b" || by["version"] != "2.0" {
			t.Fatalf("%s's client was told %v answered; want client-b 2.0", name, by)
		}
	}
	if w := listMeta(t, b, sid)["corvid.dev/waiting"]; w != nil {
		t.Fatalf("B's session/list after the answer still says waiting: %v", w)
	}
}

// askScript asks the user a single choice (ask_user with options; the
// clients here show no forms, so it is a permission prompt).
func askScript(t *testing.T) string {
	return testkit.WriteScript(t, map[string]any{"responses": []any{
		map[string]any{"parts": []any{
			map[string]any{"type": "text", "text": "Let me ask."},
			map[string]any{"type": "tool_call", "name": "ask_user", "input": map[string]any{"questions": []any{map[string]any{
				"header": "Colour", "question": "Which colour?", "options": []any{map[string]any{"label": "Red"}, map[string]any{"label": "Blue"}}}}}},
		}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Noted."}}},
	}})
}

// An ask_user choice of a turn on A is put to B's client, whose pick is
// the answer A's turn gets: the call completes with "Blue", answered by
// client-b, and A's own client's request is withdrawn.
func TestChoiceOnAIsAnsweredOnB(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := askScript(t)
	da := serveDaemon(t, script, workspace, url)
	db := serveDaemon(t, script, workspace, url)
	a := da.clientAs(t, workspace, as("client-a", "1.0"), testkit.HoldPermission(nil, nil))
	b := db.clientAs(t, workspace, as("client-b", "2.0"), testkit.PickOption("choice_2"))
	sid := a.NewSession(a.ctx, workspace)
	b.load(t, sid, workspace)
	if _, rerr := a.Call(a.ctx, "session/prompt", testkit.TextPrompt(sid, "ask me")); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	u := answeredUpdate(t, a, sid)
	if by := answeredBy(u); by["name"] != "client-b" || u["status"] != "completed" {
		t.Fatalf("A's client was shown %v; want the completed call answered by client-b", u)
	}
	if raw, _ := json.Marshal(u); !strings.Contains(string(raw), "Blue") {
		t.Fatalf("the call's outcome does not name B's pick (Blue): %s", raw)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !withdrawn(a) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !withdrawn(a) {
		t.Fatalf("A's client's request was not withdrawn after B answered")
	}
}

// A plain `corvid acp` on the shared store (no daemon) shares its
// questions too: its own client holds the question, a client of a daemon
// that holds the session answers it, and the acp's client is told so.
func TestPlainACPQuestionIsAnsweredOnADaemon(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := editScript(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	e := testkit.Start(t, corvidBin(t), testkit.Options{
		Args:       []string{"acp", "-m", "script:" + script, "--store", url},
		Dir:        workspace,
		Env:        []string{"CORVID_HOME=" + t.TempDir()},
		Permission: testkit.HoldPermission(nil, nil), // never answers
	})
	a := &machine{Editor: e, ctx: ctx}
	if _, rerr := a.Initialize(ctx, as("client-a", "1.0")); rerr != nil {
		t.Fatalf("initialize: %v\n%s", rerr, e.Stderr())
	}
	db := serveDaemon(t, script, workspace, url)
	b := db.clientAs(t, workspace, as("client-b", "2.0"), testkit.AllowOnce())
	sid := a.NewSession(a.ctx, workspace)
	b.load(t, sid, workspace)
	if res, rerr := a.Call(a.ctx, "session/prompt", testkit.TextPrompt(sid, "write the notes")); rerr != nil || !strings.Contains(string(res), "end_turn") {
		t.Fatalf("the acp's turn after B's answer: %s %v", res, rerr)
	}
	if got, err := os.ReadFile(filepath.Join(workspace, "notes.txt")); err != nil || string(got) != "written by corvid\n" {
		t.Fatalf("notes.txt after B allowed it: %q %v", got, err)
	}
	if by := answeredBy(answeredUpdate(t, a, sid)); by["name"] != "client-b" {
		t.Fatalf("the acp's client was told %v answered; want client-b", by)
	}
}
