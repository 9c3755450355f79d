package serve

// The relay answers its editor's initialize from the answers the daemon
// publishes beside its socket (internal/fastrelay, acpserver/initanswers.go,
// issue 30's start-up budget): the same bytes the daemon gives, at once,
// even while the daemon cannot run; never from a file another user could
// have written; and a relay whose answer turns out not to be the daemon's
// ends with an error rather than go on.

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// directAnswer is the daemon's own answer to line over its socket.
func directAnswer(t *testing.T, sock, line string) string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReaderSize(c, 1<<16).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// relayed runs the plain relay launch line with stdin and returns its
// output, stderr and exit status.
func relayed(t *testing.T, d *daemon, stdin string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testkit.BuildCorvid(t), "acp", "--connect", "unix:"+d.sock)
	cmd.Env = isolatedEnv(d.home)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func sessionNewLine(dir string) string {
	return `{"jsonrpc":"2.0","id":99,"method":"session/new","params":{"cwd":` + strconv.Quote(dir) + `,"mcpServers":[]}}`
}

func TestRelayGivesTheDaemonsInitializeAnswer(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, slowScript()), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"_meta":{"terminal_output":true,"terminal-auth":true}},"clientInfo":{"name":"zed","version":"0.200.0"}}}`,
		`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"auth":{"terminal":true}}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1,"_meta":{"corvid.dev/dialect":"codebuddy"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1,"_meta":{"corvid.dev/dialect":"acp"},"clientCapabilities":{"_meta":{"corvid.dev/sessionsChanged":true}}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":1,"_meta":{"corvid.dev/dialect":"gascity"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1,"ClientCapabilities":{"auth":{"terminal":true}}}}`,
	} {
		want := directAnswer(t, d.sock, line)
		out, errOut, code := relayed(t, d, line+"\n"+sessionNewLine(dir)+"\n")
		first, rest, _ := strings.Cut(out, "\n")
		if code != 0 || first+"\n" != want {
			t.Errorf("%s\nrelay (exit %d): %.300s\ndaemon: %.300s\nstderr: %s", line, code, first, want, errOut)
		}
		if !strings.Contains(rest, `"id":99,"result":{"sessionId"`) {
			t.Errorf("%s: no session/new answer after it: %.300s", line, rest)
		}
	}
}

// TestRelayAnswersInitializeWhileTheDaemonIsStopped: the answer does not
// wait for the daemon (it is stopped with SIGSTOP); the daemon's own
// answer, once it runs again, agrees, and the session goes on.
func TestRelayAnswersInitializeWhileTheDaemonIsStopped(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, slowScript()), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	line := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}`
	want := directAnswer(t, d.sock, line)
	cmd := exec.Command(testkit.BuildCorvid(t), "acp", "--connect", "unix:"+d.sock)
	cmd.Env = isolatedEnv(d.home)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = d.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 4)
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	if _, err := io.WriteString(stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-lines:
		if got != want {
			t.Fatalf("relay: %.300s\ndaemon: %.300s", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no initialize answer while the daemon was stopped; stderr: %s", errb.String())
	}
	stopped = false
	if err := d.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, sessionNewLine(dir)+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-lines:
		if !strings.Contains(got, `"id":99,"result":{"sessionId"`) {
			t.Fatalf("after initialize: %.300s", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no session/new answer; stderr: %s", errb.String())
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("relay: %v; stderr: %s", err, errb.String())
	}
}

// forge rewrites the published answers so that they say title "Forged"
// where the daemon says "Corvid" (same length: the index stays right),
// with mode perm.
func forge(t *testing.T, sock string, perm os.FileMode) {
	t.Helper()
	path := sock + ".init"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := bytes.ReplaceAll(b, []byte(`"title":"Corvid"`), []byte(`"title":"Forged"`))
	if bytes.Equal(f, b) {
		t.Fatal("nothing to forge in the published answers")
	}
	if err := os.WriteFile(path, f, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// TestRelayEndsWhenItsAnswerWasNotTheDaemons: a copy that says something
// the daemon does not (here, edited by hand) is found out when the
// daemon's answer comes: the relay says so and exits 1.
func TestRelayEndsWhenItsAnswerWasNotTheDaemons(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, slowScript()), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	forge(t, d.sock, 0o600)
	out, errOut, code := relayed(t, d, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n"+sessionNewLine(dir)+"\n")
	if code != 1 || !strings.Contains(errOut, "is not the one this relay gave the editor") {
		t.Fatalf("exit %d, stderr %q; want 1 and the mismatch named", code, errOut)
	}
	if !strings.Contains(out, `"title":"Forged"`) || strings.Contains(out, `"sessionId"`) {
		t.Fatalf("relay output: %.400s", out)
	}
}

// TestRelayIgnoresAnswersOthersCanWrite: a copy that is not private to
// the user (group or world access) is never answered from.
func TestRelayIgnoresAnswersOthersCanWrite(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, slowScript()), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	forge(t, d.sock, 0o600)
	for _, perm := range []os.FileMode{0o644, 0o666, 0o640} {
		if err := os.Chmod(d.sock+".init", perm); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := relayed(t, d, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n"+sessionNewLine(dir)+"\n")
		if code != 0 || strings.Contains(out, "Forged") || !strings.Contains(out, `"title":"Corvid"`) || !strings.Contains(out, `"sessionId"`) {
			t.Fatalf("mode %v: exit %d\n%.400s\nstderr: %s", perm, code, out, errOut)
		}
	}
}

// TestAnswersFollowTheDaemon: a second daemon that finds the socket taken
// leaves the first's answers as they are; a daemon that stops removes
// its own.
func TestAnswersFollowTheDaemon(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	d := startDaemon(t, 1, "-m", "script:"+writeScript(t, dir, slowScript()), "--listen", "unix:"+sock)
	before, err := os.Stat(sock + ".init")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	second := exec.Command(testkit.BuildCorvid(t), "serve", "-m", "script:"+writeScript(t, dir, slowScript()), "--listen", "unix:"+sock)
	second.Env = isolatedEnv(d.home)
	if out, err := second.CombinedOutput(); err == nil || !strings.Contains(string(out), "another corvid serve is listening there") {
		t.Fatalf("second daemon: %v\n%s", err, out)
	}
	after, err := os.Stat(sock + ".init")
	if err != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Fatalf("the first daemon's answers changed: %v %v -> %v", err, before.ModTime(), after)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop")
	}
	if _, err := os.Stat(sock + ".init"); !os.IsNotExist(err) {
		t.Fatalf("a stopped daemon left its answers: %v", err)
	}
}
