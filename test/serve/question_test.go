package serve

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// TestQuestionOfATurnWhoseClientLeftIsAnsweredWithRespond: the client
// that started a turn leaves while its permission question is pending;
// the turn goes on, the question is written into the conversation, and
// `corvid respond ID allow` from a terminal lets the write happen.
func TestQuestionOfATurnWhoseClientLeftIsAnsweredWithRespond(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	a.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	a.waitText(sid, "I will create notes.txt.")
	time.Sleep(200 * time.Millisecond) // the question is on its way to A, which never answers
	a.conn.Close()

	// The question is pending on the daemon's control socket.
	var id string
	deadline := time.Now().Add(15 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		list := exec.Command(testkit.BuildCorvid(t), "respond", "--json")
		list.Env = isolatedEnv(d.home)
		out, _ := list.Output()
		var qs []struct {
			ID        string `json:"id"`
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(out, &qs)
		for _, q := range qs {
			if q.SessionID == sid {
				id = q.ID
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("corvid respond never listed the pending question")
	}
	respond := exec.Command(testkit.BuildCorvid(t), "respond", id, "allow")
	respond.Env = isolatedEnv(d.home)
	if out, err := respond.CombinedOutput(); err != nil {
		t.Fatalf("corvid respond: %v\n%s", err, out)
	}
	if got := replayAfter(t, d.sock, sid, dir, "Done: notes.txt now exists.", 15*time.Second); !strings.Contains(got, "Done: notes.txt now exists.") {
		t.Fatalf("the turn did not finish after the answer: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "written by corvid\n" {
		t.Fatalf("notes.txt: %q %v", b, err)
	}
}
