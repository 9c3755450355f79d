package serve

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	fa "github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// startPricedDaemon is startDaemonIn on a priced model (claude-haiku-4-5)
// whose API is api, so the sessions have a cost.
func startPricedDaemon(t *testing.T, home, sock string, api *fa.Server) *daemon {
	t.Helper()
	d := &daemon{home: home, sock: sock, done: make(chan struct{})}
	d.cmd = exec.Command(testkit.BuildCorvid(t), "serve", "-m", "anthropic:claude-haiku-4-5", "--yolo", "--listen", "unix:"+sock)
	d.cmd.Dir = home
	d.cmd.Env = append(isolatedEnv(home), "ANTHROPIC_API_KEY=sk-ant-list", "ANTHROPIC_BASE_URL="+api.URL())
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
			if listening.MatchString(sc.Text()) {
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
		t.Fatalf("daemon exited:\n%s", d.stderr())
	case <-time.After(20 * time.Second):
		t.Fatalf("daemon did not listen:\n%s", d.stderr())
	}
	return d
}

// listed is session/list's _meta of each session, by id.
func listed(t *testing.T, sock string) map[string]map[string]any {
	t.Helper()
	c := dial(t, sock)
	initialize(c)
	defer c.conn.Close()
	out := map[string]map[string]any{}
	for _, s := range c.call("session/list", map[string]any{})["sessions"].([]any) {
		s := s.(map[string]any)
		m, _ := s["_meta"].(map[string]any)
		out[s["sessionId"].(string)] = m
	}
	return out
}

// costOf is a list _meta's corvid.dev/cost amount (false: none, or not in USD).
func costOf(m map[string]any) (float64, bool) {
	c, _ := m["corvid.dev/cost"].(map[string]any)
	amount, ok := c["amount"].(float64)
	return amount, ok && c["currency"] == "USD"
}

// TestListAfterKillSaysInterruptedAndTheStoredCost: a daemon killed with
// kill -9 in the middle of a session's second turn; the next daemon,
// which holds no session, lists that one as interrupted with the cost of
// its first turn, and a session whose turn finished as neither
// interrupted nor running, with its cost. Once the interrupted session
// is loaded and a turn of it ends, it is no longer interrupted.
func TestListAfterKillSaysInterruptedAndTheStoredCost(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	api := fa.New(t)
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{fa.Text("done answer")}, Usage: fa.Usage{InputTokens: 1000, OutputTokens: 10}},
		fa.Response{Blocks: []fa.Block{fa.Text("cut answer first turn")}, Usage: fa.Usage{InputTokens: 2000, OutputTokens: 20}},
		fa.Response{Blocks: []fa.Block{fa.Text("slow-start " + strings.Repeat("word ", 200))}, ChunkSize: 8, EventDelay: 50 * time.Millisecond,
			Usage: fa.Usage{InputTokens: 3000, OutputTokens: 30}},
	)
	first := startPricedDaemon(t, home, sock, api)
	a := dial(t, sock)
	initialize(a)
	done := newSession(a, dir)
	a.call("session/prompt", map[string]any{"sessionId": done, "prompt": prompt("one")})
	cut := newSession(a, dir)
	a.call("session/prompt", map[string]any{"sessionId": cut, "prompt": prompt("two")})

	live := listed(t, sock)
	doneCost, ok := costOf(live[done])
	cutCost, ok2 := costOf(live[cut])
	if !ok || !ok2 || doneCost <= 0 || cutCost <= 0 {
		t.Fatalf("the held sessions' costs: %v / %v", live[done], live[cut])
	}

	a.send("session/prompt", map[string]any{"sessionId": cut, "prompt": prompt("three")})
	a.waitText(cut, "slow-start")
	running := listed(t, sock)[cut]
	if running["corvid.dev/running"] != true || running["corvid.dev/interrupted"] != nil {
		t.Fatalf("a running turn: %v", running)
	}
	_ = first.cmd.Process.Kill()
	<-first.done

	startPricedDaemon(t, home, sock, api)
	after := listed(t, sock)
	m := after[cut]
	if m["corvid.dev/interrupted"] != true || m["corvid.dev/running"] != false {
		t.Errorf("the session killed mid-turn: %v, want interrupted and not running", m)
	}
	if got, ok := costOf(m); !ok || got != cutCost {
		t.Errorf("the session killed mid-turn costs %v, want %v (its first turn's)", m["corvid.dev/cost"], cutCost)
	}
	m = after[done]
	if _, ok := m["corvid.dev/interrupted"]; ok || m["corvid.dev/running"] != false {
		t.Errorf("the finished session: %v, want neither interrupted nor running", m)
	}
	if got, ok := costOf(m); !ok || got != doneCost {
		t.Errorf("the finished session costs %v, want %v", m["corvid.dev/cost"], doneCost)
	}

	// Held and idle it is still interrupted; a turn that ends clears it.
	b := dial(t, sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": cut, "cwd": dir, "mcpServers": []any{}})
	if m := listed(t, sock)[cut]; m["corvid.dev/interrupted"] != true || m["corvid.dev/attached"] != float64(1) {
		t.Errorf("loaded after the kill: %v, want interrupted with one client", m)
	}
	api.Enqueue(fa.Response{Blocks: []fa.Block{fa.Text("again")}, Usage: fa.Usage{InputTokens: 100, OutputTokens: 1}})
	b.call("session/prompt", map[string]any{"sessionId": cut, "prompt": prompt("four")})
	if m := listed(t, sock)[cut]; m["corvid.dev/interrupted"] != nil {
		t.Errorf("after a turn that ended: %v, want not interrupted", m)
	}
}

// TestDrainedTurnListsAsInterrupted: a turn the drain timeout cut short
// (SIGTERM, --drain-timeout) lists as interrupted on the next daemon; the
// idle session beside it does not.
func TestDrainedTurnListsAsInterrupted(t *testing.T) {
	d, dir, sid, idle, _, _, answer := drainSetup(t, slowerScript(200), "--drain-timeout", "500ms")
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-answer:
		if stopReason(m) != "cancelled" {
			t.Fatalf("the drained turn's answer: %v; want cancelled", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the drained turn never answered")
	}
	if code := d.exited(t, 10*time.Second); code != 0 {
		t.Fatalf("exit status %d; want 0", code)
	}
	d2 := startDaemonIn(t, d.home, 1, "-m", "script:"+filepath.Join(dir, "script.json"), "--yolo", "--listen", "unix:"+d.sock)
	got := listed(t, d2.sock)
	if m := got[sid]; m["corvid.dev/interrupted"] != true || m["corvid.dev/running"] != false {
		t.Errorf("the drained session lists as %v; want interrupted, not running", m)
	}
	if m, ok := got[idle]; ok && m["corvid.dev/interrupted"] != nil {
		t.Errorf("the idle session lists as %v; want not interrupted", m)
	}
}
