package security

// Issue 35, items 1 and 2: only a person answers corvid's out-of-band
// questions. A process an allowed command leaves behind (detached with
// setsid) must not approve corvid's next tool calls through the control
// socket, sandboxed or not; a person's `corvid respond` must still work;
// and root's corvid must not follow a link planted in a shared temp dir.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

var questionID = regexp.MustCompile(`corvid respond (q\w+) `)

func TestProcessLeftByAnAllowedCommandCannotApprove(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the descendant check and the sandbox are Linux only")
	}
	approver := testkit.BuildPackage(t, "./test/security/testdata/approver")
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		// reach: the approver can connect (and is refused as corvid's
		// descendant); otherwise the sandbox keeps it off the socket.
		reach   bool
		needABI int
	}{
		{name: "unsandboxed", reach: true},
		{name: "sandbox with landlock scope", args: []string{"--sandbox", "workspace-write"}, needABI: 6},
		{name: "sandbox with seccomp fallback", args: []string{"--sandbox", "workspace-write"}, env: []string{"CORVID_SANDBOX_UNIX_FILTER=seccomp"}, needABI: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if abi := landlockABI(); abi < tc.needABI {
				t.Skipf("this kernel has Landlock ABI %d; this case needs %d", abi, tc.needABI)
			}
			if tc.name == "sandbox with seccomp fallback" && runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
				t.Skip("the seccomp fallback is built for amd64 and arm64 only")
			}
			approverAttack(t, approver, tc.args, tc.env, tc.reach)
		})
	}
}

func approverAttack(t *testing.T, approver string, args, env []string, reach bool) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(ws, "approver.log")
	script := rtScript(t,
		rtTool("shell", map[string]any{"command": "./t.sh"}),
		rtTool("shell", map[string]any{"command": "touch ../PWNED_SHELL"}),
		rtTool("write", map[string]any{"path": "../PWNED_WRITE", "content": "x"}),
		rtText("done"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := testkit.Start(t, rtBinary(t), testkit.Options{Dir: ws, NeverAnswer: true, Env: env,
		Args: append([]string{"acp", "-m", "script:" + script, "--allow", "shell(./t.sh*)"}, args...)})
	runDir := filepath.Join(c.Home(), ".corvid", "run")
	// The script waits until the approver runs in its own session, as a
	// patient attacker would: what the shell tool cleans up when the
	// command ends (its process group) no longer holds it.
	tsh := fmt.Sprintf("#!/bin/sh\nsetsid %s %s %s 60 </dev/null >/dev/null 2>&1 &\nwhile [ ! -s %s ]; do sleep 0.05; done\necho left-behind\n", approver, runDir, logPath, logPath)
	if err := os.WriteFile(filepath.Join(ws, "t.sh"), []byte(tsh), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killApprover(logPath) })
	if _, rerr := c.Initialize(ctx, testkit.OldGasCity()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := c.NewSession(ctx, ws)
	p := c.CallAsync("session/prompt", testkit.TextPrompt(sid, "go"))

	// Each question the model's next calls raise: give the approver its
	// chance, then answer deny as a person would, from outside corvid.
	for range 2 {
		qctx, qcancel := context.WithTimeout(ctx, 20*time.Second)
		u, err := c.WaitUpdate(qctx, func(u testkit.Update) bool {
			return questionID.MatchString(testkit.TextOf([]testkit.Update{u}, "agent_message_chunk"))
		})
		qcancel()
		if err != nil {
			break // the turn went on without asking: approved by someone
		}
		id := questionID.FindStringSubmatch(testkit.TextOf([]testkit.Update{u}, "agent_message_chunk"))[1]
		seen := len(readLog(logPath))
		waitUntil(ctx, t, "the approver tried", func() bool {
			log := readLog(logPath)
			return strings.Contains(log, "reply "+id) || len(log) > seen+100
		}, func() string {
			entries, _ := filepath.Glob(filepath.Join(runDir, "*"))
			return fmt.Sprintf("control dir holds %v; approver log:\n%s", entries, tail(readLog(logPath)))
		})
		cmd := exec.Command(rtBinary(t), "respond", id, "deny")
		cmd.Env = c.Env()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("a person's corvid respond %s deny failed: %v\n%s", id, err, out)
		}
	}
	if _, rerr := p.Wait(ctx); rerr != nil {
		t.Fatalf("prompt: %v", rerr)
	}
	log := readLog(logPath)
	killApprover(logPath)
	if code, _ := c.Close(); code != 0 {
		t.Errorf("corvid exited %d", code)
	}
	for _, f := range []string{"PWNED_SHELL", "PWNED_WRITE"} {
		if _, err := os.Stat(filepath.Join(base, f)); err == nil {
			t.Errorf("%s was created: the process left behind approved it\napprover log:\n%s", f, tail(log))
		}
	}
	if !strings.Contains(log, "sid-leader=true") {
		t.Fatalf("the approver did not run detached:\n%s", tail(log))
	}
	switch {
	case strings.Contains(log, `"error":""`) || regexp.MustCompile(`reply q\w+: \{\}`).MatchString(log):
		t.Errorf("the approver's reply was accepted:\n%s", tail(log))
	case reach && !strings.Contains(log, "started by this corvid"):
		t.Errorf("the approver was not refused as corvid's descendant:\n%s", tail(log))
	case !reach && (!strings.Contains(log, "dial error") || strings.Contains(log, "refused:")):
		t.Errorf("the sandboxed approver reached the control socket:\n%s", tail(log))
	}
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

func waitUntil(ctx context.Context, t *testing.T, what string, cond func() bool, state func() string) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting: %s (%s)", what, state())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// killApprover ends the approver a test left running (its pid is in its log).
func killApprover(logPath string) {
	m := regexp.MustCompile(`started pid=(\d+)`).FindStringSubmatch(readLog(logPath))
	if m == nil {
		return
	}
	if pid, err := strconv.Atoi(m[1]); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Item 2: root (or anyone) with neither XDG_RUNTIME_DIR nor CORVID_HOME
// keeps its control socket under the shared temp dir. A link planted there
// at the old fixed name must be neither followed nor chmodded through, and
// `corvid respond` must still find the question.
func TestPlantedLinkInSharedTempIsNotFollowed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix modes")
	}
	tmp, target := t.TempDir(), t.TempDir()
	if err := os.Chmod(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, fmt.Sprintf("corvid-%d", os.Getuid()))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script := rtScript(t, rtTool("write", map[string]any{"path": "notes.txt", "content": "x"}), rtText("done"))
	c := testkit.Start(t, rtBinary(t), testkit.Options{Dir: ws, NeverAnswer: true,
		Env:  []string{"TMPDIR=" + tmp, "XDG_RUNTIME_DIR=", "CORVID_HOME="},
		Args: []string{"acp", "-m", "script:" + script}})
	if _, rerr := c.Initialize(ctx, testkit.OldGasCity()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := c.NewSession(ctx, ws)
	p := c.CallAsync("session/prompt", testkit.TextPrompt(sid, "write"))
	u, err := c.WaitUpdate(ctx, func(u testkit.Update) bool {
		return questionID.MatchString(testkit.TextOf([]testkit.Update{u}, "agent_message_chunk"))
	})
	if err != nil {
		t.Fatalf("no out-of-band question: %v\nstderr:\n%s", err, c.Stderr())
	}
	id := questionID.FindStringSubmatch(testkit.TextOf([]testkit.Update{u}, "agent_message_chunk"))[1]
	cmd := exec.Command(rtBinary(t), "respond", id, "allow")
	cmd.Env = c.Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("corvid respond did not find the question: %v\n%s", err, out)
	}
	if _, rerr := p.Wait(ctx); rerr != nil {
		t.Fatalf("prompt: %v", rerr)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the planted link's target is now %v (%v), want 0755 untouched", fi.Mode().Perm(), err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted link was replaced: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err != nil {
		t.Errorf("the answered write did not run: %v", err)
	}
}
