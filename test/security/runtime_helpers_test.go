package security

// Helpers of runtime_test.go: a raw JSON-RPC driver for the cases the fake
// editor cannot express (a closed stderr, a hand-made environment), scripts,
// and a corvid home per test.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// rtBinary builds corvid once per test process (testkit caches the build).
func rtBinary(t *testing.T) string {
	t.Helper()
	return testkit.BuildCorvid(t)
}

// rtScript writes a scripted-model file and returns its path.
func rtScript(t *testing.T, responses ...any) string {
	t.Helper()
	return testkit.WriteScript(t, map[string]any{"responses": responses, "onExhausted": "repeat-last"})
}

// rtTool is a scripted response that calls one tool.
func rtTool(name string, input map[string]any) map[string]any {
	return map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": name, "input": input}}}
}

// rtText is a scripted response with one text part.
func rtText(text string) map[string]any {
	return map[string]any{"parts": []any{map[string]any{"type": "text", "text": text}}}
}

// rtCorvid is corvid started through the fake editor on a fresh home.
type rtCorvid struct {
	*testkit.Editor
	ctx       context.Context
	workspace string
}

// rtStart starts `corvid acp -m script:SCRIPT args...` with the editor
// options given, initialises it as a minimal client (tools in-process) and
// returns it. opts.Dir defaults to a fresh workspace.
func rtStart(t *testing.T, script string, opts testkit.Options, args ...string) *rtCorvid {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	opts.Args = append([]string{"acp", "-m", "script:" + script}, args...)
	if opts.ExitTimeout == 0 {
		opts.ExitTimeout = 5 * time.Second
	}
	c := &rtCorvid{Editor: testkit.Start(t, rtBinary(t), opts), ctx: ctx, workspace: opts.Dir}
	if _, rerr := c.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", rerr, c.Stderr())
	}
	return c
}

// toolOutput is the text content of sid's tool call updates, joined.
func (c *rtCorvid) toolOutput(sid string) string {
	var b strings.Builder
	for _, u := range c.Updates(sid) {
		raw, _ := json.Marshal(u)
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// rawAgent is corvid driven by hand over pipes: one request line in, lines
// out, nothing validated. It exists for the cases the fake editor cannot set
// up (stderr closed, a hand-made environment).
type rawAgent struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  *os.File
	lines  chan string
	exited chan struct{}
	nextID int
}

// startRaw runs bin with args, env and dir; stderr is whatever file is
// given (nil: discarded).
func startRaw(t *testing.T, env []string, dir string, stderr *os.File, args ...string) *rawAgent {
	t.Helper()
	return startRawAs(t, rtBinary(t), nil, env, dir, stderr, args...)
}

// startRawAs is startRaw with a binary of the test's choosing, run as cred
// (nil: the test's own user).
func startRawAs(t *testing.T, bin string, cred *syscall.Credential, env []string, dir string, stderr *os.File, args ...string) *rawAgent {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	a := &rawAgent{t: t, cmd: cmd, stdin: inW, lines: make(chan string, 1024), exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
		close(a.lines)
	}()
	go func() { _ = cmd.Wait(); close(a.exited) }()
	t.Cleanup(func() {
		a.stdin.Close()
		select {
		case <-a.exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-a.exited
		}
	})
	return a
}

// send writes one raw line.
func (a *rawAgent) send(line string) {
	a.t.Helper()
	if _, err := a.stdin.WriteString(line + "\n"); err != nil {
		a.t.Fatalf("write to corvid: %v", err)
	}
}

// call sends a request and returns its response line (notifications in
// between are passed to seen, if non-nil).
func (a *rawAgent) call(ctx context.Context, method string, params any, seen func(string)) (map[string]json.RawMessage, error) {
	a.nextID++
	id := a.nextID
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	a.send(string(b))
	return a.waitID(ctx, fmt.Sprint(id), seen)
}

// waitID waits for the response whose id is the JSON text id.
func (a *rawAgent) waitID(ctx context.Context, id string, seen func(string)) (map[string]json.RawMessage, error) {
	for {
		select {
		case line, ok := <-a.lines:
			if !ok {
				return nil, fmt.Errorf("corvid closed stdout before answering id %s", id)
			}
			var m map[string]json.RawMessage
			if json.Unmarshal([]byte(line), &m) != nil {
				return nil, fmt.Errorf("not JSON: %q", line)
			}
			if _, isReq := m["method"]; !isReq && string(m["id"]) == id {
				return m, nil
			}
			if seen != nil {
				seen(line)
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("no answer to id %s: %w", id, ctx.Err())
		}
	}
}

// nextResponse returns the next response line, whatever its id.
func (a *rawAgent) nextResponse(ctx context.Context) (map[string]json.RawMessage, error) {
	for {
		select {
		case line, ok := <-a.lines:
			if !ok {
				return nil, fmt.Errorf("corvid closed stdout")
			}
			var m map[string]json.RawMessage
			if json.Unmarshal([]byte(line), &m) != nil {
				return nil, fmt.Errorf("not JSON: %q", line)
			}
			if _, isReq := m["method"]; !isReq {
				return m, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// waitFile waits for path to exist with content and returns it.
func waitFile(ctx context.Context, t *testing.T, path string) string {
	t.Helper()
	for {
		if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never appeared", path)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// landlockABI is the kernel's Landlock ABI version (0: none).
func landlockABI() int {
	const createRulesetVersion = 1                                  // LANDLOCK_CREATE_RULESET_VERSION
	v, _, errno := syscall.Syscall(444, 0, 0, createRulesetVersion) // landlock_create_ruleset
	if errno != 0 {
		return 0
	}
	return int(v)
}

// needLandlock skips where the kernel cannot enforce the sandbox.
func needLandlock(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the shell sandbox is Landlock, Linux only")
	}
	if abi := landlockABI(); abi < 4 {
		t.Skipf("this kernel has Landlock ABI %d; the sandbox with network rules needs ABI 4 (Linux 6.7+)", abi)
	}
}
