package pgstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// editScript is examples/edit.json: a write that needs permission, then
// a closing message.
func editScript(t *testing.T) string {
	t.Helper()
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "examples", "edit.json")
}

// withdrawn reports whether m's editor was sent $/cancel_request.
func withdrawn(m *machine) bool {
	for _, n := range m.Notifications() {
		if n.Method == "$/cancel_request" {
			return true
		}
	}
	return false
}

// A permission question of a turn on daemon A, whose own client does not
// answer, is put to a client of daemon B that loads the session while it
// is open; B's answer wins: A's client's request is withdrawn with
// $/cancel_request, A's turn goes on (the write happens), and B sees the
// rest of the turn live.
func TestQuestionOnAIsAnsweredOnB(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := editScript(t)
	da := serveDaemon(t, script, workspace, url)
	db := serveDaemon(t, script, workspace, url)
	a := da.clientWith(t, workspace, testkit.HoldPermission(nil, nil)) // never answers
	b := db.clientWith(t, workspace, testkit.AllowOnce())
	sid := a.NewSession(a.ctx, workspace)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "write the notes"))
	if _, err := a.WaitPermission(a.ctx); err != nil {
		t.Fatalf("A's client was not asked: %v", err)
	}
	b.load(t, sid, workspace)
	if _, err := b.WaitPermission(b.ctx); err != nil {
		t.Fatalf("B's client was not asked A's question: %v", err)
	}
	res, rerr := p.Wait(a.ctx)
	if rerr != nil || !strings.Contains(string(res), "end_turn") {
		t.Fatalf("A's turn after B's answer: %s %v", res, rerr)
	}
	if got, err := os.ReadFile(filepath.Join(workspace, "notes.txt")); err != nil || string(got) != "written by corvid\n" {
		t.Fatalf("notes.txt after B allowed it: %q %v", got, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !withdrawn(a) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !withdrawn(a) {
		t.Fatalf("A's client's request was not withdrawn ($/cancel_request)")
	}
	want := "I will create notes.txt.Done: notes.txt now exists."
	for text(b.Updates(sid)) != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := text(b.Updates(sid)); got != want {
		t.Fatalf("B showed %q, want %q", got, want)
	}
}

// Both daemons' clients answer, differently; exactly one answer counts,
// the first: here A's client allows as soon as B's client has been asked,
// and B's client would reject 3 s after it was asked. The write happens,
// and B's request is withdrawn (or answered too late to count). (A's
// client waits for B's to be asked: were it to answer before B's daemon
// read the question, B would never be asked, which is right but not what
// this test is about.)
func TestFirstAnswerAcrossDaemonsWins(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := editScript(t)
	da := serveDaemon(t, script, workspace, url)
	db := serveDaemon(t, script, workspace, url)
	release := make(chan struct{})
	a := da.clientWith(t, workspace, testkit.HoldPermission(release, testkit.AllowOnce()))
	b := db.clientWith(t, workspace, testkit.DelayPermission(3*time.Second, testkit.RejectOnce()))
	sid := a.NewSession(a.ctx, workspace)
	b.load(t, sid, workspace)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "write the notes"))
	if _, err := b.WaitPermission(b.ctx); err != nil {
		t.Fatalf("B's client was never asked: %v", err)
	}
	close(release)
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	if got, err := os.ReadFile(filepath.Join(workspace, "notes.txt")); err != nil || string(got) != "written by corvid\n" {
		t.Fatalf("notes.txt after A's client allowed first: %q %v", got, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !withdrawn(b) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !withdrawn(b) {
		t.Fatalf("B's client's request was not withdrawn after A's answer won")
	}
}
