package tui_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// serveDaemon is a `corvid serve` of the test's own on a unix socket.
type serveDaemon struct {
	cmd  *exec.Cmd
	done chan struct{}
	url  string // the WebSocket endpoint, when an HTTP listener was asked for
}

// startServe runs `corvid serve -m MODEL --listen unix:SOCK` (and with
// http, a loopback HTTP listener too) in the session's home and waits
// until it listens.
func startServe(t *testing.T, s *session, model, sock string, http ...bool) *serveDaemon {
	t.Helper()
	args := []string{"serve", "-m", model, "--listen", "unix:" + sock}
	want := 1
	if len(http) > 0 && http[0] {
		args, want = append(args, "--listen", "127.0.0.1:0"), 2
	}
	cmd := exec.Command(filepath.Join(s.bins, "corvid"), args...)
	cmd.Dir, cmd.Env = s.dir, s.env
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	d := &serveDaemon{cmd: cmd, done: make(chan struct{})}
	up := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "listening on "); ok {
				up <- strings.TrimSpace(url)
			}
		}
		_ = cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() { d.stop() })
	for i := 0; i < want; i++ {
		select {
		case u := <-up:
			if strings.HasPrefix(u, "http://") {
				d.url = "ws://" + strings.TrimPrefix(u, "http://")
			}
		case <-d.done:
			t.Fatal("corvid serve exited at start")
		case <-time.After(20 * time.Second):
			t.Fatal("corvid serve did not listen")
		}
	}
	return d
}

func (d *serveDaemon) stop() {
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// kill ends the daemon as a crash would.
func (d *serveDaemon) kill() {
	_ = d.cmd.Process.Kill()
	<-d.done
}

// An editor (the fake editor, through `corvid acp --connect`) and the TUI
// hold one session of the daemon. The editor's prompt asks permission;
// the question reaches the TUI too, the editor answers first, and the
// TUI's question closes and says it was answered elsewhere, then the TUI
// follows the rest of the turn.
func TestConnectJoinsASessionAndAnotherClientAnswersFirst(t *testing.T) {
	for _, over := range []string{"unix", "websocket"} {
		t.Run(over, func(t *testing.T) { joinAndAnswerElsewhere(t, over) })
	}
}

func joinAndAnswerElsewhere(t *testing.T, over string) {
	s := newSession(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	d := startServe(t, s, s.script("edit.json", editScript), sock, over == "websocket")
	endpoint := "unix:" + sock
	if over == "websocket" {
		endpoint = d.url
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var tm *tmuxTerm
	asked := make(chan struct{})
	editor := testkit.Start(t, filepath.Join(s.bins, "corvid"), testkit.Options{
		Args: []string{"acp", "--connect", endpoint},
		// The editor answers once the question is on the TUI's screen.
		Permission: func(ctx context.Context, req testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
			select {
			case <-asked:
			case <-ctx.Done():
				return testkit.PermissionOutcome{Cancelled: true}, nil
			}
			return testkit.AllowOnce()(ctx, req)
		},
	})
	if _, rerr := editor.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := editor.NewSession(ctx, s.dir)

	tm = s.open(200, 30, nil, "tui", "--connect", endpoint, "--session", sid)
	tm.waitFor("session " + sid + " loaded")
	tm.waitFor("⇄ " + endpoint)

	done := make(chan string, 1)
	go func() {
		stop, rerr := editor.Prompt(ctx, sid, "write the notes")
		if rerr != nil {
			stop = rerr.Message
		}
		done <- stop
	}()
	q := tm.waitFor("[y/1]")
	if !strings.Contains(q, "notes.txt") {
		t.Errorf("the question lacks the file:\n%s", q)
	}
	close(asked)
	out := tm.waitFor("answered by Zed") // the editor's clientInfo, from the daemon's corvid.dev/answeredBy
	if stop := <-done; stop != "end_turn" {
		t.Fatalf("the editor's prompt: %s", stop)
	}
	out = tm.waitFor("Finished with notes.txt.")
	if strings.Contains(tm.screen(), "[y/1]") {
		t.Errorf("the TUI's question is still open:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, "notes.txt")); err != nil || string(b) != "written by corvid\n" {
		t.Errorf("notes.txt: %q %v", b, err)
	}
}

// The daemon dies under the TUI: the TUI says the connection is lost and
// tries again with backoff; once a daemon answers on the socket again it
// re-attaches the session (session/load) without printing the transcript
// a second time, and the next prompt works.
func TestConnectReconnectsWithoutRepeatingTheTranscript(t *testing.T) {
	s := newSession(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	model := s.script("hello.json", `{"responses": [
	  {"parts": [{"type": "text", "text": "First answer, once."}]},
	  {"parts": [{"type": "text", "text": "Second answer, after the reconnection."}]}]}`)
	d := startServe(t, s, model, sock)
	tm := s.open(200, 30, nil, "tui", "--connect", "unix:"+sock)
	tm.ready()
	tm.waitFor("⇄ unix:" + sock)
	tm.typeText("one")
	tm.keys("Enter")
	tm.waitFor("First answer, once.")
	tm.idle()

	d.kill()
	tm.waitFor("connection to unix:" + sock + " lost")
	tm.waitFor("reconnecting in")
	startServe(t, s, model, sock)
	tm.waitFor("reconnected to unix:" + sock)

	tm.typeText("two")
	tm.keys("Enter")
	out := tm.waitFor("Second answer, after the reconnection.")
	out = tm.idle()
	all := tm.all()
	for _, once := range []string{"First answer, once.", "› one"} {
		if n := strings.Count(all, once); n != 1 {
			t.Errorf("%q is in the scrollback %d times:\n%s", once, n, all)
		}
	}
	if strings.Contains(out, "✗ ") && !strings.Contains(out, "lost") {
		t.Errorf("an error after the reconnection:\n%s", out)
	}
}

// The connection drops in the middle of a streamed answer (the relay is
// killed; the daemon and its turn go on): the TUI reconnects, and the
// re-attach's replay adds only the rest of the cut message, so every line
// of the answer is in the scrollback once, in order.
func TestConnectDropMidAnswerShowsEachLineOnce(t *testing.T) {
	s := newSession(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	var text strings.Builder
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&text, "answer line %d of 8\\n", i)
	}
	model := s.script("slow.json", `{"chunkSize": 2, "delayMs": 25, "responses": [{"parts": [{"type": "text", "text": "`+text.String()+`"}]}]}`)
	startServe(t, s, model, sock)
	tm := s.open(120, 30, nil, "tui", "--connect", "unix:"+sock)
	tm.ready()
	var pane int
	fmt.Sscan(tm.tmux("display-message", "-p", "-t", "main", "#{pane_pid}"), &pane)
	var relay []int
	for _, ui := range childrenOf(t, pane) {
		relay = append(relay, childrenOf(t, ui)...)
	}
	if len(relay) != 1 {
		t.Fatalf("found relay processes %v under the pane's shell %d", relay, pane)
	}
	tm.typeText("go")
	tm.keys("Enter")
	tm.waitFor("answer line 3 of 8")
	p, err := os.FindProcess(relay[0])
	must(t, err)
	must(t, p.Kill())
	tm.waitFor("lost")
	tm.waitFor("reconnected to unix:" + sock)
	tm.waitFor("answer line 8 of 8")
	out := tm.idle()
	all := tm.all()
	if n := strings.Count(all, "› go"); n != 1 {
		t.Errorf("the prompt cut off by the drop is in the scrollback %d times", n)
	}
	last := -1
	for i := 1; i <= 8; i++ {
		line := fmt.Sprintf("answer line %d of 8", i)
		if n := strings.Count(all, line); n != 1 {
			t.Errorf("%q is in the scrollback %d times", line, n)
		}
		at := strings.Index(all, line)
		if at < last {
			t.Errorf("%q is out of order", line)
		}
		last = at
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("the pane:\n%s\nthe screen:\n%s", all, out)
	}
}

// Esc in the TUI cancels a turn another client (the fake editor) started
// in the shared session.
func TestConnectEscCancelsAnotherClientsTurn(t *testing.T) {
	s := newSession(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	startServe(t, s, s.script("slow.json", `{"chunkSize": 1, "delayMs": 40, "responses": [{"parts": [{"type": "text", "text": "a slow answer that the TUI cancels long before it ends"}]}]}`), sock)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	editor := testkit.Start(t, filepath.Join(s.bins, "corvid"), testkit.Options{Args: []string{"acp", "--connect", "unix:" + sock}})
	if _, rerr := editor.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := editor.NewSession(ctx, s.dir)
	tm := s.open(120, 30, nil, "tui", "--connect", "unix:"+sock, "--session", sid)
	tm.waitFor("session " + sid + " loaded")
	done := make(chan string, 1)
	go func() {
		stop, rerr := editor.Prompt(ctx, sid, "go")
		if rerr != nil {
			stop = rerr.Message
		}
		done <- stop
	}()
	tm.waitFor("a slow")
	tm.keys("Escape")
	select {
	case stop := <-done:
		if stop != "cancelled" {
			t.Fatalf("the editor's turn ended %q; want cancelled", stop)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Esc in the TUI did not cancel the editor's turn")
	}
}

// --connect auto attaches to the daemon on the default socket, and the
// status line names the socket auto stood for.
func TestConnectAutoNamesTheDefaultSocket(t *testing.T) {
	s := newSession(t)
	var home string
	for _, e := range s.env {
		if v, ok := strings.CutPrefix(e, "CORVID_HOME="); ok {
			home = v
		}
	}
	sock := filepath.Join(home, "run", "serve.sock")
	if len(sock) > 100 {
		t.Skipf("the default socket %s is too long for a unix socket here", sock)
	}
	must(t, os.MkdirAll(filepath.Dir(sock), 0o700))
	startServe(t, s, s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "From the daemon."}]}]}`), sock)
	tm := s.open(200, 30, nil, "tui", "--connect", "auto")
	tm.ready()
	tm.waitFor("⇄ auto: unix:" + sock)
	tm.typeText("hi")
	tm.keys("Enter")
	tm.waitFor("From the daemon.")
}
