package pgstore

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// daemon is one `corvid serve` with a home of its own (another machine)
// on the shared store, listening on a unix socket.
type daemon struct {
	cmd  *exec.Cmd
	sock string
	mu   sync.Mutex
	errb bytes.Buffer
	done chan struct{}
}

func (d *daemon) stderr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.errb.String()
}

// serveDaemon starts `corvid serve -m script:SCRIPT --store URL` in
// workspace and waits until its socket listens.
func serveDaemon(t *testing.T, script, workspace, url string, extra ...string) *daemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgd") // a short path: a socket's is limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &daemon{sock: filepath.Join(dir, "s.sock"), done: make(chan struct{})}
	args := append([]string{"serve", "-m", "script:" + script, "--store", url, "--listen", "unix:" + d.sock}, extra...)
	d.cmd = exec.Command(corvidBin(t), args...)
	d.cmd.Dir = workspace
	d.cmd.Env = append(os.Environ(), "CORVID_HOME="+filepath.Join(dir, "home"), "CORVID_KEYRING=off")
	stderr, _ := d.cmd.StderrPipe()
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	up := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			d.mu.Lock()
			d.errb.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
			if strings.Contains(sc.Text(), "corvid serve: listening on") {
				up <- struct{}{}
			}
		}
		_ = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		_ = d.cmd.Process.Signal(os.Interrupt)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() {
			t.Logf("daemon stderr:\n%s", d.stderr())
		}
	})
	select {
	case <-up:
	case <-d.done:
		t.Fatalf("corvid serve exited:\n%s", d.stderr())
	case <-time.After(30 * time.Second):
		t.Fatalf("corvid serve did not listen:\n%s", d.stderr())
	}
	return d
}

// client connects an editor to d (`corvid acp --connect unix:SOCK`, the
// relay) and initializes it.
func (d *daemon) client(t *testing.T, workspace string) *machine {
	t.Helper()
	return d.clientWith(t, workspace, nil)
}

// clientWith is client with the editor's answer to permission requests.
func (d *daemon) clientWith(t *testing.T, workspace string, perm testkit.PermissionHandler) *machine {
	t.Helper()
	return d.clientAs(t, workspace, testkit.Minimal(), perm)
}

// clientAs is clientWith initializing as host (its clientInfo).
func (d *daemon) clientAs(t *testing.T, workspace string, host testkit.Host, perm testkit.PermissionHandler) *machine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	e := testkit.Start(t, corvidBin(t), testkit.Options{
		Args:       []string{"acp", "--connect", "unix:" + d.sock},
		Dir:        workspace,
		Env:        []string{"CORVID_HOME=" + t.TempDir()},
		Permission: perm,
	})
	m := &machine{Editor: e, ctx: ctx}
	if _, rerr := m.Initialize(ctx, host); rerr != nil {
		t.Fatalf("initialize: %v\n%s", rerr, e.Stderr())
	}
	return m
}

// listMeta is the _meta session/list on m gives session sid.
func listMeta(t *testing.T, m *machine, sid string) map[string]any {
	t.Helper()
	var list struct {
		Sessions []struct {
			SessionID string         `json:"sessionId"`
			Meta      map[string]any `json:"_meta"`
		} `json:"sessions"`
	}
	m.MustCall(m.ctx, "session/list", map[string]any{}, &list)
	for _, s := range list.Sessions {
		if s.SessionID == sid {
			return s.Meta
		}
	}
	t.Fatalf("session/list lacks session %s: %+v", sid, list.Sessions)
	return nil
}

// Two daemons on one store: session/list on B lists A's session, says it
// runs while A's turn runs and not after, and counts B's own clients as
// attached (a count of this daemon's connections).
func TestSessionListOnBSaysWhatRunsOnA(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := liveScript(t)
	da := serveDaemon(t, script, workspace, url)
	db := serveDaemon(t, script, workspace, url)
	a := da.client(t, workspace)
	b := db.client(t, workspace)
	sid := a.NewSession(a.ctx, workspace)
	if m := listMeta(t, b, sid); m["corvid.dev/running"] != false || m["corvid.dev/attached"] != float64(0) {
		t.Fatalf("B's list before any turn: %v; want not running, 0 attached", m)
	}
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream it"))
	waitText(t, a, sid, 100)
	if m := listMeta(t, b, sid); m["corvid.dev/running"] != true || m["corvid.dev/attached"] != float64(0) {
		t.Fatalf("B's list while A runs a turn: %v; want running, 0 attached (on B)", m)
	}
	b.load(t, sid, workspace)
	if m := listMeta(t, b, sid); m["corvid.dev/running"] != true || m["corvid.dev/attached"] != float64(1) {
		t.Fatalf("B's list after B's client loaded it: %v; want running, 1 attached", m)
	}
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	if m := listMeta(t, b, sid); m["corvid.dev/running"] != false {
		t.Fatalf("B's list after A's turn: %v; want not running", m)
	}
	want := strings.Repeat("0123456789", 150)
	waitText(t, b, sid, len(want))
	if got := text(b.Updates(sid)); got != want {
		t.Fatalf("B (a daemon) showed %d bytes, want exactly A's %d", len(got), len(want))
	}
}

// Two clients of daemon B: the first loaded the session before A's turn,
// the second loads it in the middle of the turn (it attaches to the
// session B already follows). Both show A's text exactly.
func TestSecondClientOfBAttachesMidTurn(t *testing.T) {
	url := database(t)
	workspace := t.TempDir()
	script := liveScript(t)
	da := serveDaemon(t, script, workspace, url)
	db := serveDaemon(t, script, workspace, url)
	a := da.client(t, workspace)
	b1 := db.client(t, workspace)
	b2 := db.client(t, workspace)
	sid := a.NewSession(a.ctx, workspace)
	b1.load(t, sid, workspace)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream it"))
	waitText(t, b1, sid, 300)
	replayed := text(b2.load(t, sid, workspace))
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("A's turn: %v", rerr)
	}
	want := strings.Repeat("0123456789", 150)
	if len(replayed) < 300 || len(replayed) >= len(want) {
		t.Fatalf("B's second client replayed %d bytes; want a load in the middle of the turn", len(replayed))
	}
	for _, m := range []*machine{b1, b2} {
		waitText(t, m, sid, len(want))
	}
	time.Sleep(100 * time.Millisecond)
	for i, m := range []*machine{b1, b2} {
		if got := text(m.Updates(sid)); got != want {
			t.Fatalf("B's client %d showed %d bytes, want exactly A's %d", i+1, len(got), len(want))
		}
	}
}
