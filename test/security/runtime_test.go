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
