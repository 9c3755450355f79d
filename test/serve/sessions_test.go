package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowScript answers one prompt with 40 words, one chunk every 30 ms
// (about 1.2 s), ending in END.
func slowScript() map[string]any {
	var words []string
	for i := range 40 {
		words = append(words, fmt.Sprintf("part-%02d", i))
	}
	return map[string]any{"chunkSize": 8, "delayMs": 30, "responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": strings.Join(words, " ") + " END"}}},
	}}
}

// replayAfter loads sid from a fresh connection until its replay shows
// want, or the deadline passes; it returns the last replay's text.
func replayAfter(t *testing.T, sock, sid, cwd, want string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	var got string
	for time.Now().Before(deadline) {
		b := dial(t, sock)
		initialize(b)
		b.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
		got = b.text(sid)
		b.conn.Close()
		if strings.Contains(got, want) {
			return got
		}
		time.Sleep(200 * time.Millisecond)
	}
	return got
}

// startTurnAndLeave opens a session on a new connection, starts the slow
// turn, waits for its first words and closes the connection.
func startTurnAndLeave(t *testing.T, d *daemon, cwd string) string {
	t.Helper()
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, cwd)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	a.waitText(sid, "part-02")
	a.conn.Close()
	return sid
}

func TestTurnGoesOnAfterItsClientLeaves(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	sid := startTurnAndLeave(t, d, dir)
	// The turn runs to its end with nobody attached; a second connection
	// then replays all of it from the daemon's store.
	if got := replayAfter(t, d.sock, sid, dir, "END", 15*time.Second); !strings.Contains(got, "part-39 END") {
		t.Fatalf("replay after the client left: %q; want the whole answer", got)
	}
}

func TestOnDisconnectCancelEndsTheTurnWithItsClient(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--on-disconnect", "cancel", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	sid := startTurnAndLeave(t, d, dir)
	got := replayAfter(t, d.sock, sid, dir, "END", 3*time.Second)
	if strings.Contains(got, "END") || !strings.Contains(got, "part-0") {
		t.Fatalf("replay under cancel: %q; want the answer cut short", got)
	}
}

func TestSessionListAndLoadFromAnotherConnection(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Hello from the daemon."}}},
	}})
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	if r := a.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("hi")}); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", r)
	}
	// A stays connected; B sees A's session and replays it.
	b := dial(t, d.sock)
	initialize(b)
	list := b.call("session/list", map[string]any{})
	sessions, _ := list["sessions"].([]any)
	found := false
	for _, s := range sessions {
		if m, _ := s.(map[string]any); m["sessionId"] == sid {
			found = true
		}
	}
	if !found {
		t.Fatalf("session/list from another connection: %v; want %s", list, sid)
	}
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if got := b.text(sid); !strings.Contains(got, "Hello from the daemon.") {
		t.Fatalf("replay on the second connection: %q", got)
	}
}

func TestDefaultSocketIsPrivate(t *testing.T) {
	script := writeScript(t, t.TempDir(), slowScript())
	d := startDaemon(t, 1, "-m", "script:"+script)
	if want := filepath.Join(d.home, ".corvid", "run", "serve.sock"); d.sock != want {
		t.Fatalf("default socket %s; want %s", d.sock, want)
	}
	fi, err := os.Stat(d.sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v; want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Dir(d.sock))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode %v; want 0700", di.Mode().Perm())
	}
}

// TestDaemonKilledAndRestartedServesItsSessions: kill -9 leaves the
// socket file behind; a new daemon on the same path replaces it and
// serves the session the first one stored.
func TestDaemonKilledAndRestartedServesItsSessions(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Stored before the kill."}}},
	}})
	sock := filepath.Join(dir, "s.sock")
	first := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+sock)
	a := dial(t, sock)
	initialize(a)
	sid := newSession(a, dir)
	a.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("hi")})
	_ = first.cmd.Process.Kill()
	<-first.done
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("kill -9 should leave the socket file: %v", err)
	}
	startDaemonIn(t, first.home, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+sock)
	if got := replayAfter(t, sock, sid, dir, "Stored before the kill.", 10*time.Second); !strings.Contains(got, "Stored before the kill.") {
		t.Fatalf("after the restart: %q", got)
	}
}
