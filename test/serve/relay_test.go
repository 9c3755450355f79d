package serve

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// TestRelayCarriesAnEditorsSessionToTheDaemon drives `corvid acp --connect`
// with the fake editor (which checks every frame against the schema): a
// turn that writes a file asks permission through the relay, the editor
// answers, the write lands, and the relay itself opened no store.
func TestRelayCarriesAnEditorsSessionToTheDaemon(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 2, "-m", "script:"+filepath.Join(root, "examples", "edit.json"),
		"--listen", "unix:"+filepath.Join(dir, "s.sock"), "--listen", "127.0.0.1:0")
	for name, target := range map[string]string{"unix": "unix:" + d.sock, "websocket": d.url} {
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: []string{"acp", "--connect", target}})
			if _, rerr := e.Initialize(ctx, testkit.Zed()); rerr != nil {
				t.Fatal(rerr)
			}
			sid := e.NewSession(ctx, work)
			stop, rerr := e.Prompt(ctx, sid, "write the notes")
			if rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			if len(e.Permissions()) != 1 {
				t.Fatalf("permission questions through the relay: %d; want 1", len(e.Permissions()))
			}
			if b, err := os.ReadFile(filepath.Join(work, "notes.txt")); err != nil || string(b) != "written by corvid\n" {
				t.Fatalf("notes.txt: %q %v", b, err)
			}
			if code, _ := e.Close(); code != 0 {
				t.Fatalf("relay exit %d:\n%s", code, e.Stderr())
			}
			if _, err := os.Stat(filepath.Join(e.Home(), ".corvid", "sessions.db")); err == nil {
				t.Fatal("the relay opened a session store of its own")
			}
		})
	}
}

func TestRelayToNoDaemonSaysSo(t *testing.T) {
	e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: []string{"acp", "--connect", "unix:" + filepath.Join(t.TempDir(), "none.sock")}})
	code, _ := e.Close()
	if code != 1 || !strings.Contains(e.Stderr(), "no corvid serve at unix:") {
		t.Fatalf("exit %d:\n%s", code, e.Stderr())
	}
}

// TestPipedHandshakeOverTheSocketIsAnswered half-closes the socket right
// after two requests, as a piped stdin does: both are still answered.
func TestPipedHandshakeOverTheSocketIsAnswered(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	d := startDaemon(t, 1, "-m", "script:"+script, "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	c, err := net.Dial("unix", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + dir + `","mcpServers":[]}}` + "\n"))
	_ = c.(*net.UnixConn).CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var answers []string
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"result"`) {
			answers = append(answers, sc.Text())
		}
	}
	if len(answers) != 2 || !strings.Contains(answers[1], `"sessionId"`) {
		t.Fatalf("answers after the half-close: %d %v", len(answers), answers)
	}
}

// TestRelayAnswersAPipedHandshake pipes two requests into the relay and
// closes its stdin, as the README's smoke test does with `corvid acp`:
// both are answered through either transport, and the relay exits 0.
func TestRelayAnswersAPipedHandshake(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	d := startDaemon(t, 2, "-m", "script:"+script, "--listen", "unix:"+filepath.Join(dir, "s.sock"), "--listen", "127.0.0.1:0")
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + dir + `","mcpServers":[]}}` + "\n"
	for name, target := range map[string]string{"unix": "unix:" + d.sock, "websocket": d.url} {
		cmd := exec.Command(testkit.BuildCorvid(t), "acp", "--connect", target)
		cmd.Env = isolatedEnv(t.TempDir())
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: relay: %v", name, err)
		}
		if n := strings.Count(string(out), `"result"`); n != 2 || !strings.Contains(string(out), `"sessionId"`) {
			t.Fatalf("%s: %d answers:\n%s", name, n, out)
		}
	}
}

var startedPID = regexp.MustCompile(`started corvid serve \(pid (\d+)\)`)

// TestRelayAutoStartsTheDaemonOnceAndReusesIt: the first `corvid acp
// --connect auto` finds no daemon on the default socket and starts one
// (detached, with its own flags); the second reuses it.
func TestRelayAutoStartsTheDaemonOnceAndReusesIt(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"acp", "--connect", "auto", "-m", "script:" + filepath.Join(root, "examples", "hello.json"), "--yolo"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: args})
	if _, rerr := first.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v\n%s", rerr, first.Stderr())
	}
	m := startedPID.FindStringSubmatch(first.Stderr())
	if m == nil {
		t.Fatalf("the first relay did not start a daemon:\n%s", first.Stderr())
	}
	pid, _ := strconv.Atoi(m[1])
	sock := filepath.Join(first.Home(), ".corvid", "run", "serve.sock")
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 100; i++ {
			if _, err := os.Stat(sock); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	})
	sid := first.NewSession(ctx, first.Home())
	if stop, rerr := first.Prompt(ctx, sid, "Hello"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	first.Close()

	second := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: args, Env: []string{"CORVID_HOME=" + filepath.Join(first.Home(), ".corvid")}})
	if _, rerr := second.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("second initialize: %v\n%s", rerr, second.Stderr())
	}
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
	}
	second.MustCall(ctx, "session/list", map[string]any{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid {
		t.Fatalf("the second relay's daemon lists %v; want the first's session %s", list.Sessions, sid)
	}
	if strings.Contains(second.Stderr(), "started corvid serve") {
		t.Fatalf("the second relay started another daemon:\n%s", second.Stderr())
	}
}

func TestRelayToATokenDaemonSendsTheToken(t *testing.T) {
	d, dir := tokenDaemon(t)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"
	run := func(extra ...string) (string, error) {
		cmd := exec.Command(testkit.BuildCorvid(t), append([]string{"acp", "--connect", d.url}, extra...)...)
		cmd.Env = isolatedEnv(t.TempDir())
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(); err == nil || !strings.Contains(out, "401") {
		t.Fatalf("without the token: %v\n%s", err, out)
	}
	out, err := run("--connect-token-file", filepath.Join(dir, "token"))
	if err != nil || !strings.Contains(out, `"protocolVersion":1`) {
		t.Fatalf("with the token: %v\n%s", err, out)
	}
	if strings.Contains(out, token) {
		t.Fatal("the relay printed the token")
	}
}
