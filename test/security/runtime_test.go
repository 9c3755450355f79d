package security

// Runtime findings of issue #12 (9–13 and the runtime parts of the design):
// signals, secrets, per-session project config and trust, the default mode,
// store failures, one live owner per session, the shell sandbox, and the
// low-severity protocol items. Every test drives the built binary.

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Finding 12: with stderr closed, a log line must not kill corvid (SIGPIPE),
// and its shell children must not be orphaned.
func TestClosedStderrNeitherKillsCorvidNorOrphansShellChildren(t *testing.T) {
	rtBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	home, ws := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(ws, "shell.pid")
	script := rtScript(t, rtTool("shell", map[string]any{"command": "echo $$ > " + pidFile + "; exec sleep 60"}), rtText("done"))

	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR.Close() // nobody reads stderr: the next write gets EPIPE
	a := startRaw(t, testkit.IsolatedEnvAt(home), ws, errW, "acp", "-m", "script:"+script, "--yolo", "--log-level", "debug")
	errW.Close()

	// initialize with clientInfo logs a line at once.
	if _, err := a.call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]any{"name": "t", "version": "1"}}, nil); err != nil {
		t.Fatalf("initialize after stderr closed: %v", err)
	}
	res, err := a.call(ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sn struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res["result"], &sn)
	if sn.SessionID == "" {
		t.Fatalf("session/new: %s", res["error"])
	}
	a.nextID++
	promptID := a.nextID
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": promptID, "method": "session/prompt",
		"params": map[string]any{"sessionId": sn.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "go"}}}})
	a.send(string(b))
	pid, err := strconv.Atoi(waitFile(ctx, t, pidFile))
	if err != nil {
		t.Fatal(err)
	}
	a.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + sn.SessionID + `"}}`)
	resp, err := a.waitID(ctx, strconv.Itoa(promptID), nil)
	if err != nil {
		t.Fatalf("prompt after stderr closed: %v (shell pid %d alive: %v)", err, pid, !testkit.ProcessGone(pid))
	}
	if !strings.Contains(string(resp["result"]), "cancelled") {
		t.Errorf("prompt answer %s, want stopReason cancelled", resp["result"])
	}
	a.stdin.Close()
	select {
	case <-a.exited:
	case <-ctx.Done():
		t.Fatal("corvid did not exit after stdin closed")
	}
	if st := a.cmd.ProcessState; !st.Exited() || st.ExitCode() != 0 {
		t.Errorf("corvid ended with %v, want exit 0", st)
	}
	for !testkit.ProcessGone(pid) {
		select {
		case <-ctx.Done():
			t.Fatalf("shell child %d outlived corvid", pid)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Finding 13: shell and MCP stdio children inherit no provider keys and no
// CORVID_* settings, and a key value that reaches tool output anyway is
// redacted before any frame, the store or the model sees it.
func TestProviderKeysStayOutOfChildrenFramesAndStore(t *testing.T) {
	const key = "sk-ant-api03-SECRETVALUE-0123456789abcdef"
	const openaiKey = "sk-proj-OTHERSECRET-9876543210"
	ws := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "leaked.txt")
	if err := os.WriteFile(keyFile, []byte("token="+openaiKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mcpDump := filepath.Join(t.TempDir(), "mcp.env")
	script := rtScript(t,
		rtTool("shell", map[string]any{"command": "printenv ANTHROPIC_API_KEY; printenv OPENAI_API_KEY; printenv CORVID_PROBE; echo probe-done"}),
		rtTool("shell", map[string]any{"command": "cat " + keyFile}),
		rtText("done"))
	c := rtStart(t, script, testkit.Options{Dir: ws, Env: []string{"ANTHROPIC_API_KEY=" + key, "OPENAI_API_KEY=" + openaiKey, "CORVID_PROBE=corvid-setting"}}, "--yolo")
	var sn struct {
		SessionID string `json:"sessionId"`
	}
	c.MustCall(c.ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{map[string]any{
		"name": "dump", "command": "/bin/sh", "args": []any{"-c", "env > " + mcpDump + "; exit 1"}, "env": []any{}}}}, &sn)
	if stop, rerr := c.Prompt(c.ctx, sn.SessionID, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	frames := c.TranscriptString()
	if !strings.Contains(frames, "probe-done") {
		t.Fatalf("the shell command did not run:\n%s", c.toolOutput(sn.SessionID))
	}
	for _, leak := range []string{key, openaiKey, "corvid-setting"} {
		if strings.Contains(frames, leak) {
			t.Errorf("frames contain %q", leak)
		}
	}
	if !strings.Contains(frames, "token=[REDACTED]") {
		t.Errorf("the key read from a file was not redacted in the frames")
	}
	dump, err := os.ReadFile(mcpDump)
	if err != nil {
		t.Fatalf("MCP stdio child did not start: %v", err)
	}
	for _, leak := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CORVID_"} {
		if strings.Contains(string(dump), leak) {
			t.Errorf("MCP stdio child inherited %s", leak)
		}
	}
	if !strings.Contains(string(dump), "PATH=") {
		t.Errorf("MCP stdio child lost its ordinary environment:\n%s", dump)
	}
	if code, _ := c.Close(); code != 0 {
		t.Errorf("exit %d", code)
	}
	// Nothing of either key is in the session store.
	err = filepath.WalkDir(c.Home(), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, leak := range []string{key, openaiKey} {
			if strings.Contains(string(b), leak) {
				t.Errorf("%s holds a provider key", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writeProjectConfig writes dir/.corvid/config.toml.
func writeProjectConfig(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".corvid"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".corvid", "config.toml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newSessionIn opens a session with cwd dir and returns its id.
func (c *rtCorvid) newSessionIn(t *testing.T, dir string) string {
	t.Helper()
	var sn struct {
		SessionID string `json:"sessionId"`
	}
	c.MustCall(c.ctx, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}, &sn)
	return sn.SessionID
}

// Finding 9: the project config is found from the session's cwd, not from
// the directory corvid was launched in, so its denies hold.
func TestProjectDenyAppliesToSessionsWhoseCwdIsTheProject(t *testing.T) {
	launch, project := t.TempDir(), t.TempDir()
	writeProjectConfig(t, project, "[permissions]\ndeny = [\"write\"]\n")
	script := rtScript(t, rtTool("write", map[string]any{"path": "pwned.txt", "content": "x"}), rtText("done"))
	c := rtStart(t, script, testkit.Options{Dir: launch}, "--yolo")
	sid := c.newSessionIn(t, project)
	if stop, rerr := c.Prompt(c.ctx, sid, "write"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if _, err := os.Stat(filepath.Join(project, "pwned.txt")); err == nil {
		t.Error("the project's deny of write was ignored: pwned.txt was written")
	}
	if out := c.toolOutput(sid); !strings.Contains(out, "permission denied") {
		t.Errorf("the write did not fail as denied:\n%s", out)
	}
}

// Trust binds to the config file's content: after `corvid trust`, a changed
// .corvid/config.toml loosens nothing until it is trusted again, and the
// user is told why.
func TestChangedProjectConfigNeedsTrustAgain(t *testing.T) {
	project := t.TempDir()
	writeProjectConfig(t, project, "[permissions]\nallow = [\"write\"]\n")
	script := rtScript(t, rtTool("write", map[string]any{"path": "a.txt", "content": "x"}), rtText("done"))
	home := t.TempDir()
	trust := exec.Command(rtBinary(t), "trust", project)
	trust.Env, trust.Dir = testkit.IsolatedEnvAt(home, "CORVID_HOME="+home), project
	if out, err := trust.CombinedOutput(); err != nil {
		t.Fatalf("corvid trust: %v\n%s", err, out)
	}
	c := rtStart(t, script, testkit.Options{Dir: project, Env: []string{"CORVID_HOME=" + home}})
	sid := c.newSessionIn(t, project)
	if _, rerr := c.Prompt(c.ctx, sid, "write"); rerr != nil {
		t.Fatal(rerr)
	}
	if n := len(c.Permissions()); n != 0 {
		t.Fatalf("trusted allow rule: %d permission requests, want 0", n)
	}
	// The file changes (a pull, or a model editing it): same rules plus a
	// new MCP server.
	writeProjectConfig(t, project, "[permissions]\nallow = [\"write\"]\n[mcp_servers.evil]\ncommand = \"/bin/true\"\n")
	sid2 := c.newSessionIn(t, project)
	if _, rerr := c.Prompt(c.ctx, sid2, "write"); rerr != nil {
		t.Fatal(rerr)
	}
	if n := len(c.Permissions()); n != 1 {
		t.Errorf("changed config still trusted: %d permission requests, want 1", n)
	}
	if !strings.Contains(c.Stderr()+c.toolOutput(sid2), "changed since `corvid trust`") {
		t.Errorf("nobody was told the config changed since it was trusted; stderr:\n%s", c.Stderr())
	}
}

// A default mode you can set: default_mode in the user config and --mode at
// launch (the flag wins); in ask mode even a read inside the workspace asks.
func TestDefaultModeFromConfigAndFlag(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		args         []string
		wantAsks     int
		wantMode     string
	}{
		{"flag", "", []string{"--mode", "ask"}, 1, "ask"},
		{"config", "default_mode = \"ask\"\n", nil, 1, "ask"},
		{"flag over config", "default_mode = \"ask\"\n", []string{"--mode", "default"}, 0, "default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, ws := t.TempDir(), t.TempDir()
			if tc.config != "" {
				if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			script := rtScript(t, rtTool("read", map[string]any{"path": "notes.txt"}), rtText("done"))
			c := rtStart(t, script, testkit.Options{Dir: ws, Env: []string{"CORVID_HOME=" + home}}, tc.args...)
			var sn struct {
				SessionID string `json:"sessionId"`
				Modes     struct {
					CurrentModeID string `json:"currentModeId"`
				} `json:"modes"`
			}
			c.MustCall(c.ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}, &sn)
			if sn.Modes.CurrentModeID != tc.wantMode {
				t.Errorf("currentModeId %q, want %q", sn.Modes.CurrentModeID, tc.wantMode)
			}
			if _, rerr := c.Prompt(c.ctx, sn.SessionID, "read"); rerr != nil {
				t.Fatal(rerr)
			}
			if n := len(c.Permissions()); n != tc.wantAsks {
				t.Errorf("%d permission requests for a read inside the workspace, want %d", n, tc.wantAsks)
			}
		})
	}
}

// An unknown mode is a launch error naming the choices.
func TestUnknownModeIsALaunchError(t *testing.T) {
	out, err := exec.Command(rtBinary(t), "acp", "-m", "script:"+rtScript(t, rtText("x")), "--mode", "sudo").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown mode "sudo"`) {
		t.Errorf("--mode sudo: %v\n%s", err, out)
	}
}

// mountSmallFS mounts a tmpfs of size bytes under a temp dir and returns
// it; the test skips where mounting is not permitted (not root).
func mountSmallFS(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file until the file system is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill: %v", err)
			}
			return p
		}
	}
}

// Finding 10 (store part): on a full disk a turn ends with a JSON-RPC error
// that says its events could not be saved, no client saw text that a reload
// cannot show, session/new says what failed, and once space is back the
// session runs again at once (its own lease does not block it).
func TestFullDiskEndsTheTurnWithAnErrorAndSendsOnlyWhatIsStored(t *testing.T) {
	small := mountSmallFS(t, 3<<20)
	home := filepath.Join(small, "home")
	ws := t.TempDir()
	// About 4 s of text, so the disk fills while the turn streams.
	big := map[string]any{"chunkSize": 200, "delayMs": 2, "parts": []any{map[string]any{"type": "text", "text": "lorem ipsum dolor sit amet ", "repeat": 15000}}}
	script := rtScript(t, big, rtText("space is back"))
	c := rtStart(t, script, testkit.Options{Dir: ws, Env: []string{"CORVID_HOME=" + home}})
	sid := c.newSessionIn(t, ws)
	turn := c.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream a lot"))
	if _, err := c.WaitUpdate(c.ctx, func(u testkit.Update) bool { return u.SessionUpdate == "agent_message_chunk" }); err != nil {
		t.Fatal(err)
	}
	filler := fill(t, small)
	raw, rerr := turn.Wait(c.ctx)
	stop := string(raw)
	if rerr == nil {
		t.Errorf("turn on a full disk ended %q without an error", stop)
	} else if !strings.Contains(rerr.Message, "could not be saved") {
		t.Errorf("turn error %q does not say the events could not be saved", rerr.Message)
	}
	var live strings.Builder
	for _, u := range c.Updates(sid) {
		if u.SessionUpdate == "agent_message_chunk" {
			live.WriteString(u.Content.Text)
		}
	}

	_, nerr := c.Call(c.ctx, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	if nerr == nil {
		t.Error("session/new on a full disk succeeded")
	} else if (nerr.Code != -32603 && nerr.Code != -32000) || !strings.Contains(nerr.Message, "store") || !strings.Contains(nerr.Message, "full") {
		t.Errorf("session/new on a full disk: %d %q, want -32603/-32000 naming the store and the full disk", nerr.Code, nerr.Message)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	stop, rerr = c.Prompt(c.ctx, sid, "again")
	if rerr != nil || stop != "end_turn" {
		t.Errorf("prompt once space is back: %q %v", stop, rerr)
	}
	if code, _ := c.Close(); code != 0 {
		t.Errorf("exit %d", code)
	}

	// A fresh process replays the session: it must hold every chunk the
	// client saw live.
	c2 := rtStart(t, script, testkit.Options{Dir: ws, Env: []string{"CORVID_HOME=" + home}})
	c2.MustCall(c2.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}, nil)
	var replay strings.Builder
	for _, u := range c2.Updates(sid) {
		if u.SessionUpdate == "agent_message_chunk" {
			replay.WriteString(u.Content.Text)
		}
	}
	if !strings.HasPrefix(replay.String(), live.String()) {
		t.Errorf("the client saw %d bytes of text live that the store does not hold (replay %d bytes)", live.Len(), replay.Len())
	}
}

// lastAgentText is the text of sid's last agent message so far.
func (c *rtCorvid) lastAgentText(sid string) string {
	var id, text string
	for _, u := range c.Updates(sid) {
		if u.SessionUpdate != "agent_message_chunk" {
			continue
		}
		if u.MessageID != id {
			id, text = u.MessageID, ""
		}
		text += u.Content.Text
	}
	return text
}

// Finding 11: the same session loaded in two processes never runs a turn on
// stale memory. The scripted model answers the N-th model call of a
// conversation with reply-N (N counts the assistant messages it is sent),
// so the reply names how much of the conversation the model request held.
func TestSessionLoadedInTwoProcessesRunsEachTurnOnTheStoredHistory(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	script := rtScript(t, rtText("reply-0"), rtText("reply-1"), rtText("reply-2"), rtText("reply-3"))
	opts := testkit.Options{Dir: ws, Env: []string{"CORVID_HOME=" + home}}
	a := rtStart(t, script, opts)
	sid := a.newSessionIn(t, ws)
	if _, rerr := a.Prompt(a.ctx, sid, "one"); rerr != nil {
		t.Fatal(rerr)
	}
	b := rtStart(t, script, opts)
	b.MustCall(b.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}, nil)

	if _, rerr := a.Prompt(a.ctx, sid, "two"); rerr != nil {
		t.Fatal(rerr)
	}
	if got := a.lastAgentText(sid); got != "reply-1" {
		t.Fatalf("process A's second turn answered %q, want reply-1", got)
	}
	// B loaded the session before A's second turn.
	stop, rerr := b.Prompt(b.ctx, sid, "three")
	if rerr != nil {
		// Refusing with a clear error is the other acceptable answer.
		if !strings.Contains(rerr.Message+string(rerr.Data), "another corvid process") {
			t.Fatalf("B's turn refused unclearly: %v", rerr)
		}
		return
	}
	if got := b.lastAgentText(sid); got != "reply-2" {
		t.Errorf("process B's turn (%s) answered %q: its model request did not hold A's second turn (want reply-2)", stop, got)
	}
	// And back in A: it must see B's turn.
	if _, rerr := a.Prompt(a.ctx, sid, "four"); rerr != nil {
		t.Fatal(rerr)
	}
	if got := a.lastAgentText(sid); got != "reply-3" {
		t.Errorf("process A's third turn answered %q, want reply-3", got)
	}
}

// An OS sandbox for shell commands: under --sandbox workspace-write a
// command writes inside the session's directory but not outside it, TCP is
// refused unless allowed, and the permission question says so.
func TestShellSandboxConfinesWritesAndNetwork(t *testing.T) {
	needLandlock(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	base := t.TempDir()
	ws, outside, tmp := filepath.Join(base, "ws"), filepath.Join(base, "outside"), filepath.Join(base, "tmp")
	for _, d := range []string{ws, outside, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := "echo in > inside.txt; echo out > " + outside + "/escaped.txt; echo t > $TMPDIR/t.txt; " +
		"(exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo con\"\"nected); echo fin\"\"ished"
	script := rtScript(t, rtTool("shell", map[string]any{"command": cmd}), rtText("done"))

	for _, tc := range []struct {
		name        string
		args        []string
		wantInside  bool
		wantConnect bool
		wantLabel   string
	}{
		{"workspace-write", []string{"--sandbox", "workspace-write"}, true, false, "sandbox: workspace-write, no network"},
		{"read-only", []string{"--sandbox", "read-only"}, false, false, "sandbox: read-only, no network"},
		{"network allowed", []string{"--sandbox", "workspace-write", "--sandbox-network"}, true, true, "sandbox: workspace-write, network allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []string{filepath.Join(ws, "inside.txt"), filepath.Join(outside, "escaped.txt")} {
				os.Remove(p)
			}
			before := accepted.Load()
			c := rtStart(t, script, testkit.Options{Dir: ws, Env: []string{"TMPDIR=" + tmp}}, tc.args...)
			sid := c.newSessionIn(t, ws)
			if _, rerr := c.Prompt(c.ctx, sid, "run"); rerr != nil {
				t.Fatal(rerr)
			}
			out := c.toolOutput(sid)
			if !strings.Contains(out, "finished") {
				t.Fatalf("the command did not run to its end:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(outside, "escaped.txt")); err == nil {
				t.Error("a sandboxed command wrote outside the workspace")
			}
			if _, err := os.Stat(filepath.Join(ws, "inside.txt")); (err == nil) != tc.wantInside {
				t.Errorf("write inside the workspace: exists=%v, want %v", err == nil, tc.wantInside)
			}
			if got := strings.Contains(out, "connected"); got != tc.wantConnect || (accepted.Load() > before) != tc.wantConnect {
				t.Errorf("TCP connect succeeded=%v (accepted %d), want %v", got, accepted.Load()-before, tc.wantConnect)
			}
			perms := c.Permissions()
			if len(perms) != 1 || !strings.Contains(perms[0].Request.Title, tc.wantLabel) {
				var title string
				if len(perms) > 0 {
					title = perms[0].Request.Title
				}
				t.Errorf("permission question %q does not say %q", title, tc.wantLabel)
			}
		})
	}
}

// Low items: ids 1e2 and 1.0 (integers to JSON-RPC and to the ACP schema)
// are answered with the same id; a bare CR between two frames does not
// lose both; session/new refuses a cwd that does not exist or holds NUL.
func TestEnvelopeEdgeCases(t *testing.T) {
	rtBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	home, ws := t.TempDir(), t.TempDir()
	a := startRaw(t, testkit.IsolatedEnvAt(home), ws, nil, "acp", "-m", "script:"+rtScript(t, rtText("hi")))

	for _, id := range []string{"1e2", "1.0"} {
		a.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":1}}`)
		res, err := a.nextResponse(ctx)
		if err != nil {
			t.Fatalf("id %s: %v", id, err)
		}
		if string(res["id"]) != id || res["error"] != nil || res["result"] == nil {
			t.Errorf("id %s: answered id %s with error %s, want a result with the same id", id, res["id"], res["error"])
		}
	}

	a.send(`{"jsonrpc":"2.0","id":3,"method":"session/list","params":{}}` + "\r" + `{"jsonrpc":"2.0","id":4,"method":"session/list","params":{}}`)
	for _, id := range []string{"3", "4"} {
		res, err := a.nextResponse(ctx)
		if err != nil {
			t.Fatalf("frames joined by a bare CR: %v", err)
		}
		if string(res["id"]) != id || res["error"] != nil {
			t.Errorf("frames joined by a bare CR: answered id %s with error %s, want a result for id %s", res["id"], res["error"], id)
		}
	}

	for _, cwd := range []string{filepath.Join(ws, "no", "such", "dir"), ws + "\x00/etc"} {
		res, err := a.call(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Code int `json:"code"`
			Data struct {
				Details string `json:"details"`
			} `json:"data"`
		}
		_ = json.Unmarshal(res["error"], &e)
		if e.Code != -32602 || e.Data.Details == "" {
			t.Errorf("session/new cwd %q: %s, want -32602 with details", cwd, res["error"])
		}
	}
}

// pass_env in the user config passes a withheld variable on to children.
func TestPassEnvPassesANamedVariableOn(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte("pass_env = [\"CORVID_PROBE\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := rtScript(t, rtTool("shell", map[string]any{"command": "printenv CORVID_PROBE; printenv OTHER_API_KEY; echo end"}), rtText("done"))
	c := rtStart(t, script, testkit.Options{Dir: ws, Env: []string{"CORVID_HOME=" + home, "CORVID_PROBE=passed-on", "OTHER_API_KEY=withheld-value"}}, "--yolo")
	sid := c.newSessionIn(t, ws)
	if _, rerr := c.Prompt(c.ctx, sid, "go"); rerr != nil {
		t.Fatal(rerr)
	}
	out := c.toolOutput(sid)
	if !strings.Contains(out, `passed-on\nend`) {
		t.Errorf("CORVID_PROBE listed in pass_env did not reach the shell:\n%s", out)
	}
	if strings.Contains(out, "withheld-value") {
		t.Error("OTHER_API_KEY, not in pass_env, reached the shell")
	}
}
