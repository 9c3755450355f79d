package tui_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// relayOf is the pid of the TUI's relay (`corvid acp --connect`), the
// child of the TUI under the pane's shell.
func relayOf(t *testing.T, tm *tmuxTerm) int {
	t.Helper()
	var pane int
	fmt.Sscan(tm.tmux("display-message", "-p", "-t", "main", "#{pane_pid}"), &pane)
	var relay []int
	for _, ui := range childrenOf(t, pane) {
		relay = append(relay, childrenOf(t, ui)...)
	}
	if len(relay) != 1 {
		t.Fatalf("found relay processes %v under the pane's shell %d", relay, pane)
	}
	return relay[0]
}

// While the TUI is cut off from the daemon, another client (the fake
// editor) prompts the shared session. Once the TUI is attached again, the
// re-attach's replay shows that prompt above its answer, once; the TUI's
// own prompt from before the drop is not printed again.
func TestConnectShowsAPromptMadeWhileOffline(t *testing.T) {
	s := newSession(t)
	sock := filepath.Join(t.TempDir(), "s.sock")
	startServe(t, s, s.script("two.json", `{"responses": [
	  {"parts": [{"type": "text", "text": "Answer to the terminal."}]},
	  {"parts": [{"type": "text", "text": "Answer to the editor."}]}]}`), sock)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	editor := testkit.Start(t, filepath.Join(s.bins, "corvid"), testkit.Options{Args: []string{"acp", "--connect", "unix:" + sock}})
	if _, rerr := editor.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := editor.NewSession(ctx, s.dir)
	tm := s.open(160, 30, nil, "tui", "--connect", "unix:"+sock, "--session", sid)
	tm.waitFor("session " + sid + " loaded")
	tm.typeText("asked from the terminal")
	tm.keys("Enter")
	tm.waitFor("Answer to the terminal.")
	tm.idle()

	// Cut the TUI off and keep it off: the socket's name goes away (the
	// editor's connection stays), then the relay is killed.
	away := sock + ".away"
	must(t, os.Rename(sock, away))
	p, err := os.FindProcess(relayOf(t, tm))
	must(t, err)
	must(t, p.Kill())
	tm.waitFor("lost")
	if stop, rerr := editor.Prompt(ctx, sid, "asked from the editor"); rerr != nil || stop != "end_turn" {
		t.Fatalf("the editor's prompt: %q %v", stop, rerr)
	}
	must(t, os.Rename(away, sock))
	tm.waitFor("reconnected to unix:" + sock)
	tm.waitFor("Answer to the editor.")
	all := tm.idle()
	for _, once := range []string{"asked from the terminal", "Answer to the terminal.", "asked from the editor", "Answer to the editor."} {
		if n := strings.Count(all, once); n != 1 {
			t.Errorf("%q is in the scrollback %d times", once, n)
		}
	}
	if r, q, a := strings.Index(all, "reconnected to"), strings.Index(all, "asked from the editor"), strings.Index(all, "Answer to the editor."); q < r || a < q {
		t.Errorf("want the reconnection told, then the editor's prompt, then its answer")
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("the pane:\n%s", all)
	}
}
