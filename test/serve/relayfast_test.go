package serve

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// TestRelayRunsBeforeTheAgentIsInitialised: the plain launch line of the
// relay (`corvid acp --connect unix:PATH`, `--connect=…`, `--connect auto`
// with a daemon on the default socket) carries a piped handshake and exits
// 0 before the packages the agent needs are initialised (internal/fastrelay,
// issue 30): GODEBUG=inittrace=1 reports syscall's init but not os's
// (fastrelay must import no more than syscall to come first), net/http's,
// SQLite's or main's. Any other argument takes the full relay.
func TestRelayRunsBeforeTheAgentIsInitialised(t *testing.T) {
	home, err := os.MkdirTemp("", "cs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	sock := filepath.Join(home, ".corvid", "run", "serve.sock") // config.ServeSocket under isolatedEnv(home)
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, home, slowScript())
	startDaemonIn(t, home, 1, "-m", "script:"+script, "--listen", "unix:"+sock)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + home + `","mcpServers":[]}}` + "\n"
	for _, c := range []struct {
		args []string
		fast bool
	}{
		{[]string{"acp", "--connect", "unix:" + sock}, true},
		{[]string{"acp", "--connect=unix:" + sock}, true},
		{[]string{"agent-client", "--connect", "auto"}, true},
		{[]string{"acp", "--connect", "unix:" + sock, "--log-level", "debug"}, false},
	} {
		cmd := exec.Command(testkit.BuildCorvid(t), c.args...)
		cmd.Env = append(isolatedEnv(home), "GODEBUG=inittrace=1")
		cmd.Stdin = strings.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, stderr.String())
		}
		if n := strings.Count(string(out), `"result"`); n != 2 || !strings.Contains(string(out), `"name":"corvid"`) || !strings.Contains(string(out), `"sessionId"`) {
			t.Fatalf("%v: %d answers:\n%s", c.args, n, out)
		}
		trace := stderr.String()
		if !strings.Contains(trace, "init syscall @") {
			t.Fatalf("%v: no inittrace; is GODEBUG passed on?\n%s", c.args, trace)
		}
		for _, pkg := range []string{"os", "net/http", "modernc.org/sqlite", "main"} {
			if got := strings.Contains(trace, "init "+pkg+" @"); got == c.fast {
				t.Errorf("%v: %s initialised: %v; want %v", c.args, pkg, got, !c.fast)
			}
		}
	}
}

// TestFastRelayPastSelectsLimit starts the relay with 1,030 inherited
// descriptors, so its socket is numbered past what select(2) can watch:
// it relays a piped handshake all the same (without the first answer on
// one thread), rather than indexing past its descriptor set.
func TestFastRelayPastSelectsLimit(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	d := startDaemon(t, 1, "-m", "script:"+script, "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(testkit.BuildCorvid(t), "acp", "--connect", "unix:"+d.sock)
	for range 1030 {
		cmd.ExtraFiles = append(cmd.ExtraFiles, null)
	}
	cmd.Env = append(isolatedEnv(t.TempDir()), "GODEBUG=inittrace=1")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + dir + `","mcpServers":[]}}` + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("relay: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(string(out), `"result"`); n != 2 || !strings.Contains(string(out), `"sessionId"`) {
		t.Fatalf("%d answers:\n%s", n, out)
	}
	if strings.Contains(stderr.String(), "init main @") {
		t.Fatal("the relay took the full path; want the fast one")
	}
}
