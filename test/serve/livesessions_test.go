package serve

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// sessionsList runs `corvid sessions list --all` (with --json when js) in
// the daemon's home.
func sessionsList(t *testing.T, d *daemon, js bool) string {
	t.Helper()
	args := []string{"sessions", "list", "--all"}
	if js {
		args = append(args, "--json")
	}
	cmd := exec.Command(testkit.BuildCorvid(t), args...)
	cmd.Env = isolatedEnv(d.home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("corvid %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

type listedLive struct {
	ID   string `json:"id"`
	Live *struct {
		Running  bool `json:"running"`
		Attached int  `json:"attached"`
		Waiting  []struct {
			RequestID string `json:"requestId"`
		} `json:"waiting"`
	} `json:"live"`
}

func liveOf(t *testing.T, d *daemon, sid string) *listedLive {
	t.Helper()
	var list []listedLive
	out := sessionsList(t, d, true)
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("sessions list --json: %v\n%s", err, out)
	}
	for i := range list {
		if list[i].ID == sid {
			return &list[i]
		}
	}
	t.Fatalf("sessions list lacks %s:\n%s", sid, out)
	return nil
}

// TestSessionsListShowsTheDaemonsLiveState: with a daemon on the default
// socket, `corvid sessions list` says which sessions run there, how many
// clients hold them and which wait for an answer (the id corvid respond
// takes); once answered and done, the session is idle.
func TestSessionsListShowsTheDaemonsLiveState(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json")) // the default socket
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	a.waitRequest("session/request_permission")
	id := pendingQuestion(t, d, sid)

	l := liveOf(t, d, sid)
	if l.Live == nil || !l.Live.Running || l.Live.Attached != 1 || len(l.Live.Waiting) != 1 || l.Live.Waiting[0].RequestID != id {
		t.Fatalf("sessions list --json says %+v; want running, 1 client, waiting for %s", l.Live, id)
	}
	if table := sessionsList(t, d, false); !strings.Contains(table, "IN THE DAEMON") || !strings.Contains(table, "running, 1 client, waiting for an answer ("+id+")") {
		t.Fatalf("the table does not show the live state:\n%s", table)
	}

	respond := exec.Command(testkit.BuildCorvid(t), "respond", id, "allow")
	respond.Env = isolatedEnv(d.home)
	if out, err := respond.CombinedOutput(); err != nil {
		t.Fatalf("corvid respond: %v\n%s", err, out)
	}
	waitExact(t, a, sid, "I will create notes.txt.Done: notes.txt now exists.")
	deadline := time.Now().Add(10 * time.Second)
	for {
		l = liveOf(t, d, sid)
		if l.Live != nil && !l.Live.Running && l.Live.Attached == 1 && len(l.Live.Waiting) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the turn: %+v; want idle, 1 client, nothing waiting", l.Live)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if table := sessionsList(t, d, false); !strings.Contains(table, "idle, 1 client") {
		t.Fatalf("the table does not show the idle session:\n%s", table)
	}
}
