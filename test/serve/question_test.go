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

	id := pendingQuestion(t, d, sid)
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

// pendingQuestion waits until `corvid respond --json` lists a question of
// session sid on the daemon's control socket, and returns its id.
func pendingQuestion(t *testing.T, d *daemon, sid string) string {
	t.Helper()
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
	return id
}

// leaveWhileAsked starts a turn with script on a first connection, which
// never answers the agent's question and leaves once the turn has shown
// its first text.
func leaveWhileAsked(t *testing.T, script any, first string) (*daemon, string, string) {
	t.Helper()
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, script), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	a.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	a.waitText(sid, first)
	time.Sleep(200 * time.Millisecond) // the question is on its way to A
	a.conn.Close()
	return d, dir, sid
}

func TestChoiceQuestionOfATurnWhoseClientLeftIsAnsweredWithRespond(t *testing.T) {
	d, dir, sid := leaveWhileAsked(t, map[string]any{"responses": []any{
		map[string]any{"parts": []any{
			map[string]any{"type": "text", "text": "Let me ask."},
			map[string]any{"type": "tool_call", "name": "ask_user", "input": map[string]any{"questions": []any{map[string]any{
				"header": "Colour", "question": "Which colour?", "options": []any{map[string]any{"label": "Red"}, map[string]any{"label": "Blue"}}}}}},
		}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Blue it is."}}},
	}}, "Let me ask.")
	id := pendingQuestion(t, d, sid)
	respond := exec.Command(testkit.BuildCorvid(t), "respond", id, "2")
	respond.Env = isolatedEnv(d.home)
	if out, err := respond.CombinedOutput(); err != nil {
		t.Fatalf("corvid respond: %v\n%s", err, out)
	}
	if got := replayAfter(t, d.sock, sid, dir, "Blue it is.", 15*time.Second); !strings.Contains(got, "Blue it is.") {
		t.Fatalf("the turn did not finish after the answer: %q", got)
	}
}
