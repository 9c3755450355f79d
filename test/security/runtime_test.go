package security

// Runtime findings of issue #12 (9–13 and the runtime parts of the design):
// signals, secrets, per-session project config and trust, the default mode,
// store failures, one live owner per session, the shell sandbox, and the
// low-severity protocol items. Every test drives the built binary.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	a := startRaw(t, isolatedEnv(home), ws, errW, "acp", "-m", "script:"+script, "--yolo", "--log-level", "debug")
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
		t.Fatalf("prompt after stderr closed: %v (shell pid %d alive: %v)", err, pid, !processGone(pid))
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
	for !processGone(pid) {
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
	trust.Env, trust.Dir = isolatedEnv(home, "CORVID_HOME="+home), project
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
