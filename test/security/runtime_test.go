package security

// Runtime findings of issue #12 (9–13 and the runtime parts of the design):
// signals, secrets, per-session project config and trust, the default mode,
// store failures, one live owner per session, the shell sandbox, and the
// low-severity protocol items. Every test drives the built binary.

import (
	"context"
	"encoding/json"
	"os"
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
