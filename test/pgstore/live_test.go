package pgstore

import (
	neturl "net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// liveScript streams 0123456789 ×150 in chunks of 5, 4 ms apart: a turn
// of about 1.2 s, long enough to attach in its middle.
func liveScript(t *testing.T) string {
	return testkit.WriteScript(t, map[string]any{
		"onExhausted": "repeat-last",
		"responses": []any{map[string]any{"chunkSize": 5, "delayMs": 4,
			"parts": []any{map[string]any{"type": "text", "text": "0123456789", "repeat": 150}}}},
	})
}

// waitText waits until m shows at least n bytes of agent text in sid.
func waitText(t *testing.T, m *machine, sid string, n int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if got := text(m.Updates(sid)); len(got) >= n {
			return got
		}
		time.Sleep(2 * time.Millisecond)
	}
	got := text(m.Updates(sid))
	t.Fatalf("waited 30 s for %d bytes of agent text; have %d\n%s", n, len(got), m.Stderr())
	return got
}

// prompts are the user prompt texts the updates show.
func prompts(us []testkit.Update) []string {
	var out []string
	for _, u := range us {
		if u.SessionUpdate == "user_message_chunk" {
			out = append(out, u.Content.Text)
		}
	}
	return out
}

// dbName is the database a pgtest URL names.
func dbName(t *testing.T, u string) string {
	p, err := neturl.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(p.Path, "/")
}

// A turn that runs on machine A is seen live by a client of machine B
// that loaded the session in the middle of it: the replay up to the load,
// then every later chunk, live, so that the text B shows is exactly A's,
// in order, with nothing missing or twice at the boundary.
func TestTurnOnAIsSeenLiveOnB(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := liveScript(t)
	a := start(t, script, workspace, []string{"--store", url})
	b := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)

	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream it"))
	waitText(t, a, sid, 200)
	replay := b.load(t, sid, workspace)
	replayed := text(replay)
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	want := strings.Repeat("0123456789", 150)
	if shown := text(a.Updates(sid)); shown != want {
		t.Fatalf("A showed %d bytes, want the scripted %d", len(shown), len(want))
	}
	if len(replayed) == 0 || len(replayed) >= len(want) {
		t.Fatalf("B's replay held %d of %d bytes; want a load in the middle of the turn", len(replayed), len(want))
	}
	got := waitText(t, b, sid, len(want))
	time.Sleep(100 * time.Millisecond) // a duplicate would come now
	if got = text(b.Updates(sid)); got != want {
		t.Fatalf("B showed %d bytes (%d from the replay), want exactly A's %d:\n%.200q", len(got), len(replayed), len(want), got)
	}
	if ps := prompts(b.Updates(sid)); len(ps) != 1 || ps[0] != "stream it" {
		t.Errorf("B showed prompts %q, want A's once", ps)
	}
	live := len(b.Updates(sid)) - len(replay)
	t.Logf("B replayed %d bytes, then %d live updates", len(replayed), live)
	if live < 2 {
		t.Errorf("B got %d live updates after its load; want the rest of the turn live", live)
	}

	// A second turn, started after B loaded, is seen whole and live too.
	before := len(b.Updates(sid))
	a.MustCall(a.ctx, "session/prompt", testkit.TextPrompt(sid, "again"), nil)
	deadline := time.Now().Add(20 * time.Second)
	for text(b.Updates(sid)[before:]) != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := text(b.Updates(sid)[before:]); got != want {
		t.Fatalf("B showed %d bytes of A's second turn, want %d", len(got), len(want))
	}
	// B continues the session with the whole history.
	before = len(a.Updates(sid))
	b.MustCall(b.ctx, "session/prompt", testkit.TextPrompt(sid, "on B now"), nil)
	deadline = time.Now().Add(20 * time.Second)
	for text(a.Updates(sid)[before:]) != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := text(a.Updates(sid)[before:]); got != want {
		t.Fatalf("A showed %d bytes of B's turn live, want %d", len(got), len(want))
	}
}

// B, restarted in the middle of A's turn, catches up: its new process's
// client loads the session and sees the rest of the turn live.
func TestRestartedBCatchesUpMidTurn(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := liveScript(t)
	a := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)
	b1 := start(t, script, workspace, []string{"--store", url})
	b1.load(t, sid, workspace)

	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream it"))
	waitText(t, b1, sid, 100)
	b1.Kill()
	waitText(t, a, sid, 400)
	b2 := start(t, script, workspace, []string{"--store", url})
	replayed := text(b2.load(t, sid, workspace))
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	want := strings.Repeat("0123456789", 150)
	if len(replayed) < 400 || len(replayed) >= len(want) {
		t.Fatalf("restarted B replayed %d bytes; want a load in the middle of the turn", len(replayed))
	}
	waitText(t, b2, sid, len(want))
	time.Sleep(100 * time.Millisecond)
	if got := text(b2.Updates(sid)); got != want {
		t.Fatalf("restarted B showed %d bytes, want exactly A's %d", len(got), len(want))
	}
}

// Notifications on corvid's channel that are not corvid's (malformed, a
// forged seq, an unknown session) are ignored: B stays up and still shows
// A's turn exactly.
func TestMalformedNotificationsAreIgnored(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := liveScript(t)
	a := start(t, script, workspace, []string{"--store", url})
	b := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)
	b.load(t, sid, workspace)
	db := dbName(t, url)
	for _, payload := range []string{
		"", "garbage", "x -5 " + sid, "x 12", "x notanumber " + sid, "x 99999999999999999999 " + sid,
		"x 1 sess_unknown", strings.Repeat("z", 7000), "x 3 " + sid, "x 9000000 " + sid,
	} {
		if out, err := server(t).Psql(db, "SELECT pg_notify('corvid_events', '"+strings.ReplaceAll(payload, "'", "''")+"')"); err != nil {
			t.Fatalf("notify %q: %v\n%s", payload, err, out)
		}
	}
	a.MustCall(a.ctx, "session/prompt", testkit.TextPrompt(sid, "after the noise"), nil)
	want := strings.Repeat("0123456789", 150)
	waitText(t, b, sid, len(want))
	time.Sleep(100 * time.Millisecond)
	if got := text(b.Updates(sid)); got != want {
		t.Fatalf("B showed %d bytes, want exactly A's %d", len(got), len(want))
	}
	if _, rerr := b.Call(b.ctx, "session/list", map[string]any{}); rerr != nil {
		t.Fatalf("B after the notifications: %v\n%s", rerr, b.Stderr())
	}
}

// The boundary is the database and its credentials: a session id from
// one team's store gives a corvid on another store (another database, as
// another user's credentials reach) nothing: its load is "not found", its
// list does not show it, and nothing of the turn reaches it.
func TestSessionIDOfAnotherStoreReadsNothing(t *testing.T) {
	url := database(t)
	other := database(t)
	workspace := t.TempDir()
	script := liveScript(t)
	a := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)
	a.MustCall(a.ctx, "session/prompt", testkit.TextPrompt(sid, "secret turn"), nil)

	c := start(t, script, workspace, []string{"--store", other})
	_, rerr := c.Call(c.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": workspace, "mcpServers": []any{}})
	if rerr == nil {
		t.Fatalf("session/load of another store's session id succeeded on C")
	}
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
	}
	c.MustCall(c.ctx, "session/list", map[string]any{}, &list)
	for _, s := range list.Sessions {
		if s.SessionID == sid {
			t.Fatalf("C's session/list shows A's session %s", sid)
		}
	}
	a.MustCall(a.ctx, "session/prompt", testkit.TextPrompt(sid, "another secret"), nil)
	time.Sleep(200 * time.Millisecond)
	if us := c.Updates(sid); len(us) != 0 {
		t.Fatalf("C got %d updates of A's session", len(us))
	}
	if strings.Contains(c.TranscriptString(), "0123456789") {
		t.Fatalf("C's transcript holds A's text")
	}

	// Another user, whose role may not connect to A's database: its
	// corvid pointed at A's database is refused at start, naming the
	// store, and lists nothing.
	adb := dbName(t, url)
	role := "mallory_" + adb // roles are the server's, not the database's: one per test
	for _, q := range []string{"CREATE ROLE " + role + " LOGIN", "REVOKE CONNECT ON DATABASE " + adb + " FROM PUBLIC"} {
		if out, err := server(t).Psql("postgres", q); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, out)
		}
	}
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.User(role)
	cmd := exec.Command(corvidBin(t), "sessions", "list", "--all", "--store", u.String())
	cmd.Env = append(cmd.Environ(), "CORVID_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), sid) || !strings.Contains(string(out), "permission denied") {
		t.Fatalf("corvid sessions list as another role on A's database = %v\n%s\nwant refused (permission denied), nothing listed", err, out)
	}
}

// A tool call that runs on A when B loads the session is replayed as
// running, not as interrupted (its turn runs, elsewhere), and its result
// then reaches B live.
func TestToolCallRunningOnAIsNotInterruptedOnB(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := testkit.WriteScript(t, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": "shell",
			"input": map[string]any{"command": "sleep 5 && echo slept"}}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "finished"}}},
	}})
	a := start(t, script, workspace, []string{"--store", url, "--yolo"})
	b := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "run it"))
	deadline := time.Now().Add(20 * time.Second)
	called := func() bool {
		for _, u := range a.Updates(sid) {
			if u.SessionUpdate == "tool_call" {
				return true
			}
		}
		return false
	}
	for !called() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the call's rows committed, the shell running (5 s)
	replay := b.load(t, sid, workspace)
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	midCall := false
	for _, u := range replay {
		midCall = midCall || u.SessionUpdate == "tool_call"
		if u.Status == "completed" {
			midCall = false
			break
		}
	}
	if !midCall {
		t.Fatalf("B's load was not in the middle of the tool call: %d replayed updates", len(replay))
	}
	for _, u := range replay {
		raw := strings.ToLower(string(u.Raw))
		if strings.Contains(raw, "interrupted") || u.Status == "failed" {
			t.Fatalf("B's replay shows the running call as interrupted or failed: %s", raw)
		}
	}
	for text(b.Updates(sid)) != "finished" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	completed := false
	for _, u := range b.Updates(sid) {
		completed = completed || u.Status == "completed"
	}
	if !completed || text(b.Updates(sid)) != "finished" {
		t.Fatalf("B did not see the call complete and the answer live: %q, completed %v", text(b.Updates(sid)), completed)
	}
}

// The listening connections lost in the middle of a turn (terminated by
// the server): B catches up by polling until it listens again, and shows
// A's turn exactly, nothing missing, nothing twice.
func TestLostListenConnectionCatchesUp(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := liveScript(t)
	a := start(t, script, workspace, []string{"--store", url})
	b := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)
	b.load(t, sid, workspace)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream it"))
	waitText(t, b, sid, 300)
	db := dbName(t, url)
	out, err := server(t).Psql(db, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'")
	if err != nil || strings.TrimSpace(out) == "0" {
		t.Fatalf("terminate the listening connections: %q %v", out, err)
	}
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	want := strings.Repeat("0123456789", 150)
	waitText(t, b, sid, len(want))
	time.Sleep(100 * time.Millisecond)
	if got := text(b.Updates(sid)); got != want {
		t.Fatalf("B showed %d bytes after losing its listening connection, want exactly A's %d", len(got), len(want))
	}
	// And it listens again: A's next turn is seen live too.
	before := len(b.Updates(sid))
	a.MustCall(a.ctx, "session/prompt", testkit.TextPrompt(sid, "again"), nil)
	deadline := time.Now().Add(20 * time.Second)
	for text(b.Updates(sid)[before:]) != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := text(b.Updates(sid)[before:]); got != want {
		t.Fatalf("B showed %d bytes of A's next turn, want %d", len(got), len(want))
	}
}
