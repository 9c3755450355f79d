package reliability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// vanishScript streams a thought and a long answer in small chunks, then runs
// a shell command that sleeps (its argument is marker).
func vanishScript(marker string) map[string]any {
	return map[string]any{"responses": []any{
		map[string]any{"chunkSize": 2, "delayMs": 2, "parts": []any{
			part("thinking", "Think first."),
			part("text", uniqueText("v", 120)),
			map[string]any{"type": "tool_call", "name": "shell", "input": map[string]any{"command": "sleep " + marker + " && echo finished"}},
		}},
		map[string]any{"parts": []any{part("text", "done")}},
	}}
}

// A client that closes corvid's stdin mid-turn (while text streams, or while
// the turn's shell command runs) sees corvid exit 0 within 1 s with its
// children gone, and a new process loads the session with everything that was
// streamed.
func TestStdinClosedMidTurnExitsCleanlyAndKeepsTheSession(t *testing.T) {
	needProc(t)
	rng := seeded(t)
	for _, stage := range []string{"text", "shell"} {
		t.Run(stage, func(t *testing.T) {
			marker := fmt.Sprintf("30.%09d", rng.IntN(1e9))
			st := newStore(t, vanishScript(marker))
			a := st.start(t, "--yolo")
			sid := a.newSession(t)
			a.CallAsync("session/prompt", testkit.TextPrompt(sid, "stream, then run"))
			var err error
			if stage == "text" {
				for range 10 {
					_, err = a.WaitUpdate(a.ctx, testkit.Kind(sid, "agent_message_chunk"))
				}
			} else {
				_, err = a.WaitUpdate(a.ctx, func(u testkit.Update) bool {
					return u.SessionID == sid && u.SessionUpdate == "tool_call_update" && u.Status == "in_progress"
				})
				if err == nil && !eventually(2*time.Second, func() bool { return len(testkit.ProcessesMatching(marker)) > 0 }) {
					t.Fatal("the shell command never started")
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			code, took := a.Close()
			if code != 0 || took > hangLimit {
				t.Errorf("stdin closed mid-turn: exit %d after %v, want 0 without hanging", code, took)
			}
			testkit.WaitGone(t, "the shell command after corvid exited", testkit.ProcessesMatching(marker)...)
			streamed := a.Updates(sid)

			b := st.start(t)
			replay := b.load(t, sid)
			for _, kind := range []string{"agent_thought_chunk", "agent_message_chunk"} {
				if got, want := testkit.TextOf(replay, kind), testkit.TextOf(streamed, kind); !strings.HasPrefix(got, want) {
					t.Errorf("replayed %s %q lacks what was streamed, %q", kind, shorten(got), shorten(want))
				}
			}
			checkStoreIntact(t, b.ctx, st.dbPath(), sid)
			b.Close()
		})
	}
}

// rawAgent is corvid started without the fake editor, so the test owns the
// read end of its stdout pipe.
type rawAgent struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File // read end
	lines  *bufio.Scanner
	exited chan struct{}
}

func startRaw(t *testing.T, st *store, args ...string) *rawAgent {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cmd := exec.Command(testkit.BuildCorvid(t), append([]string{"acp", "-m", "script:" + st.script}, args...)...)
	cmd.Dir = st.workspace
	cmd.Env = append(os.Environ(), "HOME="+home, "CORVID_HOME="+st.home, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home,
		"XDG_STATE_HOME="+home, "XDG_CACHE_HOME="+home, "CORVID_KEYRING=off")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	r := &rawAgent{cmd: cmd, stdin: inW, stdout: outR, exited: make(chan struct{})}
	r.lines = bufio.NewScanner(outR)
	r.lines.Buffer(make([]byte, 64<<10), testkit.MaxLine)
	go func() { _ = cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-r.exited
		inW.Close()
		outR.Close()
	})
	return r
}

func (r *rawAgent) send(t *testing.T, id int, method string, params any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := r.stdin.Write(append(b, '\n')); err != nil {
		t.Fatalf("write %s: %v", method, err)
	}
}

// until reads stdout lines until pred accepts one, and returns that line.
func (r *rawAgent) until(t *testing.T, pred func(line string) bool) string {
	t.Helper()
	for r.lines.Scan() {
		if line := r.lines.Text(); pred(line) {
			return line
		}
	}
	t.Fatalf("corvid's stdout ended: %v", r.lines.Err())
	return ""
}

// A client whose end of corvid's stdout goes away mid-stream (the editor
// crashed, but stdin stays open) makes corvid exit within 1 s, not spin or
// hang writing; a new process loads the session and the store is intact.
func TestBrokenStdoutMidStreamEndsCorvidAndKeepsTheSession(t *testing.T) {
	needProc(t)
	rng := seeded(t)
	marker := fmt.Sprintf("30.%09d", rng.IntN(1e9))
	st := newStore(t, vanishScript(marker))
	r := startRaw(t, st, "--yolo")
	r.send(t, 0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	r.until(t, func(l string) bool { return strings.Contains(l, `"id":0`) })
	r.send(t, 1, "session/new", map[string]any{"cwd": st.workspace, "mcpServers": []any{}})
	var res struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(r.until(t, func(l string) bool { return strings.Contains(l, `"id":1`) })), &res)
	sid := res.Result.SessionID
	if sid == "" {
		t.Fatal("no session id")
	}
	r.send(t, 2, "session/prompt", testkit.TextPrompt(sid, "stream, then run"))
	var streamed strings.Builder
	for range 5 {
		line := r.until(t, func(l string) bool { return strings.Contains(l, `"agent_message_chunk"`) })
		var n struct {
			Params struct {
				Update struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(line), &n)
		streamed.WriteString(n.Params.Update.Content.Text)
	}
	broke := time.Now()
	r.stdout.Close() // the client is gone; its stdin end stays open
	select {
	case <-r.exited:
		t.Logf("corvid exited %v after its stdout broke: %v", time.Since(broke).Round(time.Millisecond), r.cmd.ProcessState)
	case <-time.After(time.Second):
		t.Errorf("corvid still runs 1s after its stdout broke (it should notice the next write fail)")
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.exited
	}
	testkit.WaitGone(t, "the shell command after corvid exited", testkit.ProcessesMatching(marker)...)

	b := st.start(t)
	replay := b.load(t, sid)
	if got := testkit.TextOf(replay, "agent_message_chunk"); !strings.HasPrefix(got, streamed.String()) {
		t.Errorf("replayed text %q lacks what the client read, %q", shorten(got), shorten(streamed.String()))
	}
	if u := testkit.TextOf(replay, "user_message_chunk"); u != "stream, then run" {
		t.Errorf("replayed prompt %q", u)
	}
	checkStoreIntact(t, b.ctx, st.dbPath(), sid)
	if stop, rerr := b.Prompt(b.ctx, sid, "again"); rerr != nil || stop != "end_turn" {
		t.Errorf("prompt after the load: %q %v", stop, rerr)
	}
	b.Close()
}
