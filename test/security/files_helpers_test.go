package security

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Helpers for the file-tool attacks (files_test.go). They drive the built
// binary (testkit.BuildCorvid builds it once per test process) with a
// scripted model whose tool calls are the attack.

// fileAgent is one running corvid with a workspace directory and a
// directory outside it.
type fileAgent struct {
	*testkit.Editor
	ctx       context.Context
	workspace string
	outside   string
	sid       string
}

// fileToolCall is a script part that calls a tool.
func fileToolCall(name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_call", "name": name, "input": input}
}

// fileAttackScript answers the first prompt with the given tool calls, one
// model response each, then a closing text.
func fileAttackScript(calls ...map[string]any) map[string]any {
	var responses []any
	for _, c := range calls {
		responses = append(responses, map[string]any{"parts": []any{c}})
	}
	responses = append(responses, map[string]any{"parts": []any{map[string]any{"type": "text", "text": "done"}}})
	return map[string]any{"responses": responses, "onExhausted": "repeat-last"}
}

// startFileAgent serves ACP with script in a fresh workspace, initialised
// as a client without fs/terminal capabilities (tools run in-process, as
// in the attacks), with a session open. setup runs before the agent starts.
func startFileAgent(t *testing.T, script map[string]any, opts testkit.Options, setup func(ws, outside string), args ...string) *fileAgent {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if setup != nil {
		setup(ws, outside)
	}
	scriptPath := testkit.WriteScript(t, script)
	opts.Args = append([]string{"acp", "-m", "script:" + scriptPath}, args...)
	opts.Dir = ws
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	a := &fileAgent{Editor: testkit.Start(t, bin, opts), ctx: ctx, workspace: ws, outside: outside}
	if _, rerr := a.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	a.sid = a.NewSession(ctx, ws)
	return a
}

// promptWithin sends a prompt and fails the test if the turn does not end
// within d (a hang on a FIFO or /dev/stdin); it returns the stop reason.
func (a *fileAgent) promptWithin(t *testing.T, d time.Duration, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, d)
	defer cancel()
	stop, rerr := a.Prompt(ctx, a.sid, text)
	if ctx.Err() != nil {
		t.Fatalf("the turn did not end within %v (it hangs):\n%s", d, fileTail(a.TranscriptString(), 3000))
	}
	if rerr != nil {
		t.Fatalf("prompt: %v", rerr)
	}
	return stop
}

// setMode switches the session's permission mode.
func (a *fileAgent) setMode(t *testing.T, mode string) {
	t.Helper()
	a.MustCall(a.ctx, "session/set_mode", map[string]any{"sessionId": a.sid, "modeId": mode}, nil)
}

// toolResults returns the final tool_call_update of each tool call, in
// order, as (status, all text content joined).
func (a *fileAgent) toolResults() []fileToolResult {
	var order []string
	final := map[string]*fileToolResult{}
	for _, u := range a.Updates(a.sid) {
		if u.SessionUpdate != "tool_call" && u.SessionUpdate != "tool_call_update" {
			continue
		}
		r, ok := final[u.ToolCallID]
		if !ok {
			r = &fileToolResult{id: u.ToolCallID}
			final[u.ToolCallID] = r
			order = append(order, u.ToolCallID)
		}
		if u.Status != "" {
			r.status = u.Status
		}
		for _, c := range u.ToolContent {
			r.text += c.Content.Text + "\n"
		}
	}
	out := make([]fileToolResult, len(order))
	for i, id := range order {
		out[i] = *final[id]
	}
	return out
}

type fileToolResult struct {
	id, status, text string
}

// maxFrame is the longest line the agent wrote to stdout.
func (a *fileAgent) maxFrame() int {
	n := 0
	for _, l := range a.Transcript() {
		if l.Dir == testkit.FromAgent {
			n = max(n, len(l.Text))
		}
	}
	return n
}

// export runs `corvid sessions export --format jsonl` against the agent's
// store and returns what it printed.
func (a *fileAgent) export(t *testing.T) string {
	t.Helper()
	cmd := exec.CommandContext(a.ctx, testkit.BuildCorvid(t), "sessions", "export", "--format", "jsonl", a.sid)
	cmd.Env = a.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sessions export: %v\n%s", err, out)
	}
	return string(out)
}

// peakRSS is the agent process's peak resident memory in bytes (VmHWM), or
// -1 where /proc does not say.
func (a *fileAgent) peakRSS() int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(a.PID()), "status"))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return -1
}

func fileTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func putTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
