package pgstore

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// A store URL that cannot be reached, or a server that refuses it, ends
// `corvid acp` and `corvid run` at start-up with exit 1 and an error
// naming the URL without its password.
func TestUnreachableStoreExitsNamingTheURLWithoutItsPassword(t *testing.T) {
	srv := server(t)
	bin := corvidBin(t)
	cases := []struct{ name, url, want string }{
		{"no server", "postgres://corvid:s3cret-pw@/corvid?host=" + t.TempDir() + "&port=1", "postgres://corvid:xxxxx@/corvid"},
		{"no such database", strings.Replace(srv.URL("nosuchdb"), "postgres://", "postgres://postgres:s3cret-pw@", 1), "no such database"},
	}
	for _, c := range cases {
		for _, args := range [][]string{{"acp", "--store", c.url}, {"run", "-p", "hi", "-m", "script:" + testkit.WriteScript(t, map[string]any{"responses": []any{map[string]any{"parts": []any{map[string]any{"type": "text", "text": "ok"}}}}}), "--store", c.url}} {
			t.Run(c.name+"/"+args[0], func(t *testing.T) {
				cmd := exec.Command(bin, args...)
				cmd.Env = append(cmd.Environ(), "CORVID_HOME="+t.TempDir())
				out, err := cmd.CombinedOutput()
				code := cmd.ProcessState.ExitCode()
				if err == nil || code != 1 {
					t.Fatalf("exit %d (%v), want 1:\n%s", code, err, out)
				}
				if strings.Contains(string(out), "s3cret-pw") {
					t.Fatalf("the error shows the password:\n%s", out)
				}
				if !strings.Contains(string(out), "open session store postgres://") || !strings.Contains(string(out), c.want) {
					t.Fatalf("error %q does not name the store URL and %q", out, c.want)
				}
			})
		}
	}
}

// The database restarted during a turn: the turn ends with an error that
// says so, nothing the client was shown is lost (another process loads
// at least that), and the same process's next prompt works: the pool
// reconnects by itself.
func TestDatabaseRestartDuringATurn(t *testing.T) {
	srv := server(t)
	url := database(t)
	workspace := t.TempDir()
	script := testkit.WriteScript(t, map[string]any{
		"onExhausted": "repeat-last",
		"responses": []any{map[string]any{"chunkSize": 1, "delayMs": 2,
			"parts": []any{map[string]any{"type": "text", "text": "0123456789", "repeat": 100}}}},
	})
	a := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream"))
	deadline := time.Now().Add(30 * time.Second)
	for len(text(a.Updates(sid))) < 200 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.StopServer(); err != nil {
		t.Fatal(err)
	}
	res, rerr := p.Wait(a.ctx)
	shown := text(a.Updates(sid))
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if rerr == nil {
		t.Fatalf("the turn ended %s although the database went away mid-turn (%d bytes shown)", res, len(shown))
	}
	t.Logf("turn ended with %v (%d bytes shown)", rerr, len(shown))

	b := start(t, script, workspace, nil, "CORVID_STORE="+url)
	if got := text(b.load(t, sid, workspace)); !strings.HasPrefix(got, shown) {
		t.Fatalf("after the restart another process loaded %d bytes that do not begin with the %d shown", len(got), len(shown))
	}
	b.Close()

	before := len(a.Updates(sid))
	if _, rerr := a.Call(a.ctx, "session/prompt", testkit.TextPrompt(sid, "again")); rerr != nil {
		t.Fatalf("the next prompt after the restart failed: %v\n%s", rerr, a.Stderr())
	}
	if got := text(a.Updates(sid)[before:]); got != strings.Repeat("0123456789", 100) {
		t.Errorf("the next prompt showed %d bytes, want the whole answer", len(got))
	}
}

// The server stopped for 10 s: a prompt meanwhile fails at once with an
// error that names the session store, and once the server is back the
// same process's next prompt works.
func TestServerStoppedForTenSeconds(t *testing.T) {
	srv := server(t)
	url := database(t)
	workspace := t.TempDir()
	script := testkit.WriteScript(t, map[string]any{
		"onExhausted": "repeat-last",
		"responses":   []any{map[string]any{"parts": []any{map[string]any{"type": "text", "text": "answer"}}}},
	})
	a := start(t, script, workspace, []string{"--store", url})
	sid := a.NewSession(a.ctx, workspace)
	a.MustCall(a.ctx, "session/prompt", testkit.TextPrompt(sid, "before"), nil)
	if err := srv.StopServer(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	restarted := false
	defer func() {
		if !restarted {
			srv.Restart()
		}
	}()
	_, rerr := a.Call(a.ctx, "session/prompt", testkit.TextPrompt(sid, "while stopped"))
	if rerr == nil || !strings.Contains(strings.ToLower(rerr.Message+string(rerr.Data)), "session store") {
		t.Fatalf("prompt while the server is stopped = %v, want an error naming the session store", rerr)
	}
	if took := time.Since(stopped); took > 5*time.Second {
		t.Errorf("the refusal took %v", took)
	}
	time.Sleep(10*time.Second - time.Since(stopped))
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	before := len(a.Updates(sid))
	if _, rerr := a.Call(a.ctx, "session/prompt", testkit.TextPrompt(sid, "after")); rerr != nil {
		t.Fatalf("prompt after the server came back: %v\n%s", rerr, a.Stderr())
	}
	if got := text(a.Updates(sid)[before:]); got != "answer" {
		t.Errorf("prompt after the server came back showed %q", got)
	}
}
