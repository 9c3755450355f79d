package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// The daemon's signals (docs/serve.md, "Signals"): SIGTERM and SIGINT
// drain, a second one interrupts at once, SIGHUP reloads the config.

// dialWS is dial over the daemon's WebSocket at url (http://…/acp).
func dialWS(t *testing.T, url string) *client {
	t.Helper()
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 26)
	nc := websocket.NetConn(ctx, ws, websocket.MessageText)
	c := &client{t: t, conn: nc, enc: json.NewEncoder(nc), wait: map[int]chan map[string]any{}, gone: make(chan struct{})}
	t.Cleanup(func() { nc.Close() })
	go func() {
		defer close(c.gone)
		dec := json.NewDecoder(nc)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				return
			}
			c.take(m)
		}
	}()
	return c
}

// slowerScript answers with 60 words, one chunk every 50 ms (about 3 s),
// ending in END.
func slowerScript(delayMs int) map[string]any {
	var words []string
	for i := range 60 {
		words = append(words, fmt.Sprintf("part-%02d", i))
	}
	return map[string]any{"chunkSize": 8, "delayMs": delayMs, "responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": strings.Join(words, " ") + " END"}}},
	}}
}

// refusesNewConnections waits until neither the socket nor the WebSocket
// takes a new connection.
func refusesNewConnections(t *testing.T, d *daemon) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		sockErr := func() error {
			c, err := net.Dial("unix", d.sock)
			if err == nil {
				c.Close()
			}
			return err
		}()
		wsErr := func() error {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(d.url, "http"), nil)
			if err == nil {
				ws.CloseNow()
			}
			return err
		}()
		if sockErr != nil && wsErr != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("while draining, a new connection was accepted: socket err %v, websocket err %v", sockErr, wsErr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exited waits for the daemon to exit and returns its status.
func (d *daemon) exited(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-d.done:
		return d.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("the daemon did not exit within %s", within)
	}
	return -1
}

// drainSetup starts a daemon on a socket and a TCP port with a slow
// script; a socket client runs a turn, a WebSocket client attaches to it
// and holds an idle session of its own. It returns where the turn's
// answer arrives.
func drainSetup(t *testing.T, script map[string]any, extra ...string) (d *daemon, dir, sid, idle string, a, w *client, answer chan map[string]any) {
	t.Helper()
	dir = t.TempDir()
	path := writeScript(t, dir, script)
	args := append([]string{"-m", "script:" + path, "--yolo", "--listen", "127.0.0.1:0", "--listen", "unix:" + filepath.Join(dir, "s.sock")}, extra...)
	d = startDaemon(t, 2, args...)
	a = dial(t, d.sock)
	initialize(a)
	sid = newSession(a, dir)
	w = dialWS(t, d.url)
	initialize(w)
	idle = newSession(w, dir)
	answer = make(chan map[string]any, 1)
	go func() {
		answer <- a.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	}()
	a.waitText(sid, "part-02")
	w.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	return d, dir, sid, idle, a, w, answer
}

func TestSIGTERMLetsTheRunningTurnFinishThenExits0(t *testing.T) {
	d, dir, sid, idle, a, w, answer := drainSetup(t, slowerScript(50))
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	refusesNewConnections(t, d)
	// A connection already open is still served, but a new prompt is
	// refused: the daemon is stopping.
	e := w.callErr("session/prompt", map[string]any{"sessionId": idle, "prompt": prompt("more")})
	if e == nil || !strings.Contains(fmt.Sprint(e["message"]), "stopping") {
		t.Fatalf("a prompt while draining: %v; want an error saying the daemon is stopping", e)
	}
	select {
	case m := <-answer:
		if stopReason(m) != "end_turn" {
			t.Fatalf("the running turn's answer while draining: %v; want end_turn", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the running turn never answered")
	}
	// The attached client's updates may still be on their way: another
	// connection.
	w.waitText(sid, "part-59 END")
	for name, c := range map[string]*client{"socket client": a, "attached websocket client": w} {
		if got := c.text(sid); !strings.Contains(got, "part-59 END") || strings.Contains(got, "interrupted") {
			t.Errorf("%s saw %q; want the whole answer, not interrupted", name, got)
		}
	}
	if code := d.exited(t, 10*time.Second); code != 0 {
		t.Fatalf("exit status %d; want 0", code)
	}
	// Stored whole: a new daemon replays it.
	d2 := startDaemonIn(t, d.home, 1, "-m", "script:"+filepath.Join(dir, "script.json"), "--yolo", "--listen", "unix:"+d.sock)
	if got := replayAfter(t, d2.sock, sid, dir, "END", 10*time.Second); !strings.Contains(got, "part-59 END") {
		t.Fatalf("replay after the drain: %q", got)
	}
}

// interruptedReplay checks what a turn cut short left: its answer and the
// prompt's, what the clients saw, and the replay of a new daemon.
func interruptedReplay(t *testing.T, d *daemon, dir, sid string, a, w *client, answer chan map[string]any) {
	t.Helper()
	select {
	case m := <-answer:
		if stopReason(m) != "cancelled" {
			t.Fatalf("the interrupted turn's answer: %v; want cancelled", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the interrupted turn never answered")
	}
	shown := a.text(sid)
	if strings.Contains(shown, "END") || !strings.Contains(shown, "This turn was interrupted") {
		t.Fatalf("the client saw %q; want the answer cut short and the note", shown)
	}
	w.waitText(sid, "This turn was interrupted")
	if code := d.exited(t, 10*time.Second); code != 0 {
		t.Fatalf("exit status %d; want 0", code)
	}
	d2 := startDaemonIn(t, d.home, 2, "-m", "script:"+filepath.Join(dir, "script.json"), "--yolo", "--listen", "127.0.0.1:0", "--listen", "unix:"+d.sock)
	c := dialWS(t, d2.url)
	initialize(c)
	c.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	got := c.text(sid)
	cut := strings.Index(shown, "\n\n[corvid]")
	if !strings.Contains(got, shown[:cut]) || !strings.Contains(got, "This turn was interrupted") {
		t.Fatalf("replay on a new daemon:\n%q\nwant what was shown:\n%q\nand the note", got, shown)
	}
}

func TestDrainTimeoutInterruptsTheTurnAndStoresIt(t *testing.T) {
	d, dir, sid, _, a, w, answer := drainSetup(t, slowerScript(200), "--drain-timeout", "500ms")
	if err := d.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	interruptedReplay(t, d, dir, sid, a, w, answer)
	if !strings.Contains(d.stderr(), "drain timeout (500ms)") {
		t.Errorf("the log does not say why the turn was interrupted:\n%s", d.stderr())
	}
}

func TestSecondSignalInterruptsAtOnce(t *testing.T) {
	// A drain timeout far beyond the test's patience: only the second
	// signal can end the turn in time.
	d, dir, sid, _, a, w, answer := drainSetup(t, slowerScript(200), "--drain-timeout", "10m")
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	refusesNewConnections(t, d)
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	interruptedReplay(t, d, dir, sid, a, w, answer)
	if !strings.Contains(d.stderr(), "second signal") {
		t.Errorf("the log does not say why the turn was interrupted:\n%s", d.stderr())
	}
}

// waitLog waits until the daemon's stderr has said want n times.
func (d *daemon) waitLog(t *testing.T, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(d.stderr(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never logged %q (%d times):\n%s", want, n, d.stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// editIn runs examples/edit.json's turn (it writes notes.txt) in a new
// session rooted at a new directory, on a new connection, and says
// whether the file was written.
func editIn(t *testing.T, d *daemon) bool {
	t.Helper()
	dir := t.TempDir()
	c := dial(t, d.sock)
	initialize(c)
	sid := newSession(c, dir)
	if r := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")}); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", r)
	}
	c.conn.Close()
	_, err := os.Stat(filepath.Join(dir, "notes.txt"))
	return err == nil
}

// TestSIGHUPReloadsTheConfigAndKeepsTheOldOneWhenBroken: the daemon reads
// config.toml at start and on SIGHUP only. An edit applies to sessions
// that start after SIGHUP; a broken file on SIGHUP is refused, logged,
// and the previous configuration stays.
func TestSIGHUPReloadsTheConfigAndKeepsTheOldOneWhenBroken(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	cfg := filepath.Join(d.home, ".corvid", "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("interaction_timeout = \"7m\"\n\n[permissions]\ndeny = [\"write\"]\n")
	if !editIn(t, d) {
		t.Fatal("before SIGHUP, a session followed the edited config (its deny)")
	}
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitLog(t, "SIGHUP: config reloaded", 1)
	if !strings.Contains(d.stderr(), "interaction_timeout=7m0s") || !strings.Contains(d.stderr(), "permission_rules=1") {
		t.Errorf("the reload's log line does not say what it reloaded:\n%s", d.stderr())
	}
	if editIn(t, d) {
		t.Fatal("after SIGHUP, a new session wrote despite the reloaded deny rule")
	}
	write("model = \"anthropic:claude-sonnet-4-6\"\n[permissions\ndeny = \n")
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitLog(t, "SIGHUP: config not reloaded; keeping the previous configuration", 1)
	if editIn(t, d) {
		t.Fatal("after a broken config on SIGHUP, a new session lost the previous deny rule")
	}
	write("model = \"anthropic:claude-sonnet-4-6\"\n\n[permissions]\ndeny = [\"write\"]\n")
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitLog(t, "SIGHUP: config reloaded", 2)
	d.waitLog(t, "take effect only after a restart", 1)
	if !regexp.MustCompile(`keys="?\[model\]`).MatchString(d.stderr()) {
		t.Errorf("the log does not name model as needing a restart:\n%s", d.stderr())
	}
}

// TestKillDashNineLosesNothingShown: kill -9 while a turn streams to a
// WebSocket client; everything that client was shown, and a finished
// session of a socket client, is served by the next daemon: session/list
// lists both, session/load replays them over either transport.
func TestKillDashNineLosesNothingShown(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowerScript(60))
	sock := filepath.Join(dir, "s.sock")
	d := startDaemon(t, 2, "-m", "script:"+script, "--yolo", "--listen", "127.0.0.1:0", "--listen", "unix:"+sock)
	a := dial(t, sock)
	initialize(a)
	done := newSession(a, dir)
	if r := a.call("session/prompt", map[string]any{"sessionId": done, "prompt": prompt("go")}); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", r)
	}
	w := dialWS(t, d.url)
	initialize(w)
	cut := newSession(w, dir)
	w.send("session/prompt", map[string]any{"sessionId": cut, "prompt": prompt("go")})
	w.waitText(cut, "part-10")
	_ = d.cmd.Process.Kill()
	<-d.done
	<-w.gone
	shown := w.text(cut)
	if strings.Contains(shown, "END") {
		t.Fatalf("the turn ended before the kill: %q", shown)
	}

	d2 := startDaemonIn(t, d.home, 2, "-m", "script:"+script, "--yolo", "--listen", "127.0.0.1:0", "--listen", "unix:"+sock)
	c := dialWS(t, d2.url)
	initialize(c)
	list := c.call("session/list", map[string]any{})
	ids := map[string]bool{}
	for _, s := range list["sessions"].([]any) {
		ids[s.(map[string]any)["sessionId"].(string)] = true
	}
	if !ids[done] || !ids[cut] {
		t.Fatalf("session/list on the restarted daemon: %v; want %s and %s", list, done, cut)
	}
	c.call("session/load", map[string]any{"sessionId": cut, "cwd": dir, "mcpServers": []any{}})
	if got := c.text(cut); !strings.Contains(got, shown) {
		t.Fatalf("replay over WebSocket after kill -9:\n%q\nlost some of what was shown:\n%q", got, shown)
	}
	if got := replayAfter(t, d2.sock, done, dir, "part-59 END", 5*time.Second); !strings.Contains(got, "part-59 END") {
		t.Fatalf("replay over the socket after kill -9: %q", got)
	}
}

// TestDrainWaitsForATurnWhoseClientLeft: a turn that outlives its client
// (--on-disconnect continue) is a running turn too: the drain lets it
// finish and store its whole answer before the daemon exits.
func TestDrainWaitsForATurnWhoseClientLeft(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowerScript(40))
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	sid := startTurnAndLeave(t, d, dir)
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := d.exited(t, 20*time.Second); code != 0 {
		t.Fatalf("exit status %d; want 0", code)
	}
	d2 := startDaemonIn(t, d.home, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+d.sock)
	if got := replayAfter(t, d2.sock, sid, dir, "END", 5*time.Second); !strings.Contains(got, "part-59 END") || strings.Contains(got, "interrupted") {
		t.Fatalf("replay of a turn whose client left before the drain: %q; want the whole answer", got)
	}
}

// TestSIGHUPInteractionTimeoutReachesNewConnections: after SIGHUP, an
// out-of-band question (its client left) of a connection opened since
// waits for the reloaded interaction_timeout, then is denied and the turn
// goes on.
func TestSIGHUPInteractionTimeoutReachesNewConnections(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	cfg := filepath.Join(d.home, ".corvid", "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("interaction_timeout = \"300ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitLog(t, "SIGHUP: config reloaded", 1)
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	a.waitText(sid, "I will create notes.txt.")
	time.Sleep(200 * time.Millisecond) // the question is on its way to A, which never answers
	a.conn.Close()
	// The default interaction_timeout is an hour: only the reloaded one
	// lets the turn end within the test.
	got := replayAfter(t, d.sock, sid, dir, "Done: notes.txt now exists.", 15*time.Second)
	if !strings.Contains(got, "Done: notes.txt now exists.") {
		t.Fatalf("the question after SIGHUP: %q; want it denied after 300ms and the turn to go on", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err == nil {
		t.Fatal("notes.txt was written; the unanswered question should have been denied")
	}
}

// TestSIGHUPAsSoonAsItListensKeepsTheDaemon: a launcher may signal the
// daemon the moment it says where it listens; SIGHUP's default action
// would end it, so its signals must be handled by then.
func TestSIGHUPAsSoonAsItListensKeepsTheDaemon(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	for i := range 5 {
		sock := filepath.Join(dir, fmt.Sprintf("s%d.sock", i))
		d := startDaemon(t, 1, "-m", "script:"+script, "--listen", "unix:"+sock)
		_ = d.cmd.Process.Signal(syscall.SIGHUP)
		d.waitLog(t, "SIGHUP: config reloaded", 1)
		select {
		case <-d.done:
			t.Fatalf("start %d: SIGHUP right after listening ended the daemon:\n%s", i, d.stderr())
		default:
		}
	}
}
