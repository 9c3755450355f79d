package serve

// Only a person answers the daemon's questions (issue 35, under serve): a
// process that a command the user allowed leaves behind, detached with
// setsid (still the daemon's descendant: it is a child subreaper), must
// not connect to the daemon, load the running session and approve the
// next question, over the unix socket or the loopback WebSocket; a
// person's client, which the daemon did not start, still answers.

import (
	"fmt"
	"os"
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

func TestProcessLeftByAnAllowedCommandCannotAnswerTheDaemonsQuestions(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the daemon tells its descendants apart on Linux only (docs/serve.md)")
	}
	approver := testkit.BuildPackage(t, "./test/serve/testdata/approver")
	for _, tc := range []struct {
		name, over string
		allowOnce  bool // the person allows the command once, rather than --allow
	}{
		{name: "unix", over: "unix"},
		{name: "websocket", over: "websocket"},
		{name: "websocket, command allowed once", over: "websocket", allowOnce: true},
	} {
		t.Run(tc.name, func(t *testing.T) { approverAttack(t, approver, tc.over, tc.allowOnce) })
	}
}

func approverAttack(t *testing.T, approver, over string, allowOnce bool) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "approver.log")
	script := writeScript(t, dir, map[string]any{"responses": []any{
		tool("shell", map[string]any{"command": "./t.sh"}),
		tool("write", map[string]any{"path": "PWNED.txt", "content": "x"}),
		tool("write", map[string]any{"path": "person.txt", "content": "a person allowed this\n"}),
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "done."}}},
	}})
	args := []string{"-m", "script:" + script, "--listen", "unix:" + filepath.Join(dir, "s.sock"), "--listen", "127.0.0.1:0"}
	if !allowOnce {
		args = append(args, "--allow", "shell(./t.sh*)")
	}
	d := startDaemon(t, 2, args...)
	target := "unix:" + d.sock
	if over == "websocket" {
		target = "ws" + strings.TrimPrefix(d.url, "http")
	}
	// The allowed command starts the approver in its own session and
	// returns once it runs: what the shell tool cleans up when the command
	// ends (its process group) no longer holds it.
	tsh := fmt.Sprintf("#!/bin/sh\nsetsid %s %s %s 60 </dev/null >/dev/null 2>&1 &\nwhile [ ! -s %s ]; do sleep 0.05; done\necho left-behind\n",
		approver, target, logPath, logPath)
	if err := os.WriteFile(filepath.Join(dir, "t.sh"), []byte(tsh), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killApprover(logPath) })

	person := dial(t, d.sock)
	initialize(person)
	sid := newSession(person, dir)
	answer := make(chan map[string]any, 1)
	go func() {
		answer <- person.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	}()

	n := 1
	if allowOnce {
		person.answer(person.waitNthRequest("session/request_permission", 1), selected("allow_once"))
		n++
	}
	// The write of PWNED.txt asks: give the approver its chance (it
	// answered, or was refused at least twice), then deny as a person.
	q := person.waitNthRequest("session/request_permission", n)
	deadline := time.Now().Add(20 * time.Second)
	for log := readLog(logPath); !strings.Contains(log, "answered") && strings.Count(log, "refused") < 2; log = readLog(logPath) {
		if time.Now().After(deadline) {
			t.Fatalf("the approver neither answered nor was refused:\n%s", tail(log))
		}
		time.Sleep(20 * time.Millisecond)
	}
	person.answer(q, selected("reject_once"))
	// The person's own answer still counts.
	q = person.waitNthRequest("session/request_permission", n+1)
	person.answer(q, selected("allow_once"))
	select {
	case m := <-answer:
		if stopReason(m) != "end_turn" {
			t.Fatalf("prompt: %v", m)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the turn did not end")
	}
	log := readLog(logPath)
	killApprover(logPath)
	if !strings.Contains(log, "sid-leader=true") {
		t.Fatalf("the approver did not run detached:\n%s", tail(log))
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED.txt")); err == nil {
		t.Errorf("PWNED.txt was written: the process left behind approved it\napprover log:\n%s", tail(log))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "person.txt")); err != nil || string(b) != "a person allowed this\n" {
		t.Errorf("the person's allow did not write person.txt: %q %v", b, err)
	}
	if strings.Contains(log, "initialized") || strings.Contains(log, "answered") {
		t.Errorf("the approver was served:\n%s", tail(log))
	}
	if over == "websocket" && (!strings.Contains(log, "http refused") || strings.Contains(log, "http status")) {
		t.Errorf("the approver's HTTP request was not refused:\n%s", tail(log))
	}
	if !strings.Contains(d.stderr(), ") was started by this ") {
		t.Errorf("the daemon did not say it refused its descendant; approver log:\n%s", tail(log))
	}
}

// tool is a scripted response that calls one tool.
func tool(name string, input map[string]any) map[string]any {
	return map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": name, "input": input}}}
}

// waitNthRequest waits for the agent's nth request of method (from 1).
func (c *client) waitNthRequest(method string, n int) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		seen := 0
		for _, r := range c.reqs {
			if r["method"] == method {
				if seen++; seen == n {
					c.mu.Unlock()
					return r
				}
			}
		}
		c.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("request %d of %s never arrived", n, method)
	return nil
}

// selected is a permission answer choosing option.
func selected(option string) map[string]any {
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": option}}
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
