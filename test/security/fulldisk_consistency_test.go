package security

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/testkit"
)

// messageText is the text of the agent message id among updates.
func messageText(updates []testkit.Update, id string) string {
	var b strings.Builder
	for _, u := range updates {
		if u.SessionUpdate == "agent_message_chunk" && u.MessageID == id {
			b.WriteString(u.Content.Text)
		}
	}
	return b.String()
}

// firstMessageID is the id of the first agent message among updates.
func firstMessageID(updates []testkit.Update) string {
	for _, u := range updates {
		if u.SessionUpdate == "agent_message_chunk" {
			return u.MessageID
		}
	}
	return ""
}

// Issue 29, item 6: a turn cut by a full disk shows, stores and remembers
// the same text. The client saw part of an answer; a reload in a fresh
// process replays exactly that part (not more: rows committed after the
// failed commit are dropped, and rows committed before it are shown), and
// the model context, as the store folds it, holds that part too (marked as
// cut), also after a next turn in the process that was cut.
func TestFullDiskCutShowsStoresAndRemembersTheSameText(t *testing.T) {
	small := mountSmallFS(t, 8<<20)
	home := filepath.Join(small, "home")
	ws := t.TempDir()
	// An answer of 8 MiB streamed as fast as corvid goes, so frames queue
	// up behind the store's commits, into the last MiB left on the disk:
	// the answer itself fills it, mid-stream.
	big := map[string]any{"chunkSize": 200, "parts": []any{map[string]any{"type": "text", "text": "lorem ipsum dolor sit amet ", "repeat": 300000}}}
	script := rtScript(t, big, rtText("space is back"))
	opts := testkit.Options{Dir: ws, Env: []string{"CORVID_HOME=" + home}}
	c := rtStart(t, script, opts)
	sid := c.newSessionIn(t, ws)
	filler := fillAllBut(t, small, 1<<20)
	if _, rerr := c.Call(c.ctx, "session/prompt", testkit.TextPrompt(sid, "stream a lot")); rerr == nil {
		t.Fatal("the turn on a full disk ended without an error")
	}
	cutID := firstMessageID(c.Updates(sid))
	live := messageText(c.Updates(sid), cutID)
	if live == "" || strings.Count(live, "lorem") >= 300000 {
		t.Fatalf("the client saw %d bytes of the answer: the disk did not cut it", len(live))
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// The process that was cut runs its next turn from what is stored.
	if stop, rerr := c.Prompt(c.ctx, sid, "again"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt once space is back: %q %v", stop, rerr)
	}
	if code, _ := c.Close(); code != 0 {
		t.Errorf("exit %d", code)
	}

	c2 := rtStart(t, script, opts)
	c2.MustCall(c2.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}, nil)
	if replay := messageText(c2.Updates(sid), cutID); replay != live {
		t.Errorf("the client saw %d bytes of the cut answer live; a reload replays %d bytes (%+d)", len(live), len(replay), len(replay)-len(live))
	}
	c2.Close()

	st, err := store.Open(filepath.Join(home, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lg, err := agent.FoldStored(context.Background(), st, sid)
	if err != nil {
		t.Fatal(err)
	}
	// user "stream a lot", the cut answer, user "again", "space is back".
	h := lg.History
	if len(h) < 2 || h[1].Role != llm.RoleAssistant || len(h[1].Parts) == 0 {
		t.Fatalf("model context after the cut: %d messages, want the cut answer second", len(h))
	}
	held := h[1].Parts[0].Text
	if !strings.HasPrefix(held, live) || strings.Contains(held[len(live):], "lorem") {
		t.Errorf("the model context holds %d bytes of the cut answer, the client saw %d", strings.Count(held, "lorem")*len("lorem ipsum dolor sit amet "), len(live))
	}
}

// fillAllBut writes a file that leaves keep bytes free in dir's file
// system and returns its path.
func fillAllBut(t *testing.T, dir string, keep int64) string {
	t.Helper()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	free := int64(fs.Bavail) * fs.Bsize
	if free <= keep {
		t.Fatalf("only %d bytes free in %s", free, dir)
	}
	p := filepath.Join(dir, "filler")
	if err := os.WriteFile(p, make([]byte, free-keep), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
