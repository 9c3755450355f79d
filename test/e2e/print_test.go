package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// printEnv is an isolated corvid environment for print-mode runs: one HOME (so one
// session store) and a workspace to run in.
type printEnv struct {
	t         *testing.T
	env       []string
	workspace string
	script    string
}

func newPrintEnv(t *testing.T, script any) *printEnv {
	t.Helper()
	env, _ := testkit.IsolatedEnv(t)
	p := &printEnv{t: t, env: env, workspace: t.TempDir()}
	p.script = testkit.WriteScript(t, script)
	return p
}

// run runs the built corvid with args (and stdin, if not empty) and returns stdout,
// stderr and the exit code.
func (p *printEnv) run(stdin string, args ...string) (string, string, int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testkit.BuildCorvid(p.t), args...)
	cmd.Env, cmd.Dir = p.env, p.workspace
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("run corvid %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// stored returns `corvid sessions show ID` (the stored transcript).
func (p *printEnv) stored(id string) string {
	p.t.Helper()
	out, errOut, code := p.run("", "sessions", "show", id)
	if code != 0 {
		p.t.Fatalf("sessions show %s: %d %s", id, code, errOut)
	}
	return out
}

// sessionIDs lists the stored sessions, newest first.
func (p *printEnv) sessionIDs() []string {
	p.t.Helper()
	out, errOut, code := p.run("", "sessions", "list", "--json")
	if code != 0 {
		p.t.Fatalf("sessions list: %d %s", code, errOut)
	}
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		p.t.Fatalf("sessions list --json: %v\n%s", err, out)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

type printResult struct {
	Type       string `json:"type"`
	SessionID  string `json:"sessionId"`
	Text       string `json:"text"`
	StopReason string `json:"stopReason"`
	IsError    bool   `json:"isError"`
	Usage      *struct {
		Used int64 `json:"used"`
		Size int64 `json:"size"`
	} `json:"usage"`
}

const printAnswer = "Reviewed: the diff looks right."

func TestPrintModeTextStreamsOnlyTheAnswer(t *testing.T) {
	p := newPrintEnv(t, text(printAnswer, 5))
	out, errOut, code := p.run("+added line\n-removed line\n", "run", "-p", "review this", "-m", "script:"+p.script)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if out != printAnswer+"\n" {
		t.Errorf("stdout %q, want only the answer %q", out, printAnswer+"\n")
	}
	ids := p.sessionIDs()
	if len(ids) != 1 {
		t.Fatalf("stored sessions %v, want the one print mode ran", ids)
	}
	// The argument and the piped stdin together are the prompt.
	shown := p.stored(ids[0])
	for _, want := range []string{"review this", "+added line", "-removed line", printAnswer} {
		if !strings.Contains(shown, want) {
			t.Errorf("stored session lacks %q:\n%s", want, shown)
		}
	}
}

func TestPrintModeJSONIsOneResultObject(t *testing.T) {
	p := newPrintEnv(t, text(printAnswer, 5))
	out, errOut, code := p.run("some piped context", "-p", "summarise", "-m", "script:"+p.script, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	var r printResult
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Errorf("stdout holds more than one JSON value:\n%s", out)
	}
	if r.Type != "result" || r.Text != printAnswer || r.StopReason != "end_turn" || r.IsError || r.SessionID == "" {
		t.Errorf("result %+v", r)
	}
	if r.Usage == nil || r.Usage.Size == 0 {
		t.Errorf("result carries no usage: %s", out)
	}
	if !strings.Contains(p.stored(r.SessionID), "some piped context") {
		t.Error("piped stdin is not part of the stored prompt")
	}
}

func TestPrintModeStreamJSONUpdatesAreACPSessionUpdates(t *testing.T) {
	p := newPrintEnv(t, map[string]any{"responses": []any{
		map[string]any{"parts": []any{
			map[string]any{"type": "thinking", "text": "look first"},
			map[string]any{"type": "tool_call", "name": "read", "input": map[string]any{"path": "a.txt"}},
		}},
		map[string]any{"chunkSize": 6, "parts": []any{map[string]any{"type": "text", "text": printAnswer}}},
	}})
	if err := os.WriteFile(filepath.Join(p.workspace, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := p.run("stdin part", "run", "-p", "read a.txt", "-m", "script:"+p.script, "--format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	var kinds []string
	var text strings.Builder
	var lines []map[string]json.RawMessage
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line is not a JSON object: %v\n%s", err, sc.Text())
		}
		lines = append(lines, m)
		var typ string
		_ = json.Unmarshal(m["type"], &typ)
		if typ != "update" {
			continue
		}
		// Each update is what the ACP front end sends: check it against the official
		// schema's SessionUpdate.
		if err := testkit.ValidateDef("SessionUpdate", m["update"]); err != nil {
			t.Errorf("update is not an ACP SessionUpdate: %v\n%s", err, m["update"])
		}
		var u struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(m["update"], &u)
		kinds = append(kinds, u.SessionUpdate)
		if u.SessionUpdate == "agent_message_chunk" {
			text.WriteString(u.Content.Text)
		}
	}
	if len(lines) < 3 {
		t.Fatalf("too few lines:\n%s", out)
	}
	if !strings.Contains(string(lines[0]["type"]), "session") {
		t.Errorf("first line %s, want the session", lines[0]["type"])
	}
	var r printResult
	last, _ := json.Marshal(lines[len(lines)-1])
	_ = json.Unmarshal(last, &r)
	if r.Type != "result" || r.StopReason != "end_turn" || r.Text != printAnswer {
		t.Errorf("last line %s, want the result", last)
	}
	if text.String() != printAnswer {
		t.Errorf("streamed text %q, want %q", text.String(), printAnswer)
	}
	joined := strings.Join(kinds, " ")
	for _, want := range []string{"agent_thought_chunk", "tool_call", "tool_call_update", "agent_message_chunk", "usage_update"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %s update in %v", want, kinds)
		}
	}
}

func TestPrintModeRefusesWhatWouldAskAndNamesTheFlag(t *testing.T) {
	script := toolScript("write", map[string]any{"path": "notes.txt", "content": "x"})
	for _, tc := range []struct {
		args    []string
		written bool
	}{{nil, false}, {[]string{"--allow", "write"}, true}, {[]string{"--yolo"}, true}} {
		t.Run(strings.Join(append([]string{"flags"}, tc.args...), " "), func(t *testing.T) {
			p := newPrintEnv(t, script)
			args := append([]string{"run", "-p", "write notes", "-m", "script:" + p.script, "--format", "stream-json"}, tc.args...)
			out, errOut, code := p.run("", args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			_, err := os.Stat(filepath.Join(p.workspace, "notes.txt"))
			if written := err == nil; written != tc.written {
				t.Errorf("written = %v, want %v", written, tc.written)
			}
			if tc.written {
				return
			}
			if !strings.Contains(errOut, "--allow write") {
				t.Errorf("stderr does not name the flag that would allow it:\n%s", errOut)
			}
			// The model is told too, in the failed tool call.
			if !strings.Contains(out, "--allow write") || !strings.Contains(out, `"status":"failed"`) {
				t.Errorf("the refused call's failure does not name the flag:\n%s", out)
			}
		})
	}
}

func TestPrintModeResumeAndContinue(t *testing.T) {
	p := newPrintEnv(t, scriptFile(t, "print-resume"))
	model := "script:" + p.script
	out, errOut, code := p.run("", "run", "-p", "one", "-m", model, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var first printResult
	_ = json.Unmarshal([]byte(out), &first)

	out, errOut, code = p.run("", "run", "-p", "two", "-m", model, "--format", "json", "--continue")
	var second printResult
	_ = json.Unmarshal([]byte(out), &second)
	if code != 0 || second.SessionID != first.SessionID {
		t.Fatalf("--continue: exit %d, session %q, want %q; stderr %s", code, second.SessionID, first.SessionID, errOut)
	}
	out, errOut, code = p.run("", "run", "-p", "three", "-m", model, "--format", "json", "--resume", first.SessionID)
	var third printResult
	_ = json.Unmarshal([]byte(out), &third)
	if code != 0 || third.SessionID != first.SessionID {
		t.Fatalf("--resume: exit %d, session %q; stderr %s", code, third.SessionID, errOut)
	}
	shown := p.stored(first.SessionID)
	for _, want := range []string{"one", "two", "three"} {
		if !strings.Contains(shown, want) {
			t.Errorf("stored session lacks prompt %q:\n%s", want, shown)
		}
	}
	if ids := p.sessionIDs(); len(ids) != 1 {
		t.Errorf("sessions %v, want one continued session", ids)
	}
	if _, errOut, code := p.run("", "run", "-p", "x", "-m", model, "--resume", "sess_nope"); code != 1 || !strings.Contains(errOut, "sess_nope") {
		t.Errorf("--resume of an unknown id: exit %d, stderr %s; want 1 naming it", code, errOut)
	}
}

func TestPrintModeExitCodes(t *testing.T) {
	p := newPrintEnv(t, text("x", 1))
	if _, errOut, code := p.run("", "run", "-m", "script:"+p.script); code != 2 {
		t.Errorf("no prompt: exit %d, want 2; %s", code, errOut)
	}
	if _, _, code := p.run("", "run", "-p", "x", "--format", "yaml", "-m", "script:"+p.script); code != 2 {
		t.Errorf("bad --format: exit %d, want 2", code)
	}
	if _, errOut, code := p.run("", "run", "-p", "x", "-m", "anthropic:claude-sonnet-4-6"); code != 1 {
		t.Errorf("no credentials: exit %d, want 1; %s", code, errOut)
	}
}

// Print mode's no-key message is written for a terminal: no editor, no
// agent to restart; it says how to go on from where the user is. A model
// named in config.toml is named in it.
func TestPrintModeNoKeyMessageSpeaksToTheTerminal(t *testing.T) {
	p := newPrintEnv(t, text("x", 1))
	p.env = append(p.env, "CORVID_KEYRING=off")
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} {
		p.env = append(p.env, k+"=")
	}
	check := func(what, errOut string, code int, want ...string) {
		t.Helper()
		if code != 1 {
			t.Errorf("%s: exit %d, want 1; %s", what, code, errOut)
		}
		for _, bad := range []string{"editor", "restart the agent", "authenticate"} {
			if strings.Contains(errOut, bad) {
				t.Errorf("%s: the message speaks of %q, which print mode has not: %s", what, bad, errOut)
			}
		}
		for _, w := range append(want, "corvid auth login", "run the command again") {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: the message does not say %q: %s", what, w, errOut)
			}
		}
	}
	_, errOut, code := p.run("", "run", "-p", "x")
	check("no model and no key", errOut, code, "ANTHROPIC_API_KEY")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte("model = \"openai:gpt-5\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.env = append(p.env, "CORVID_HOME="+home)
	_, errOut, code = p.run("", "run", "-p", "x")
	check("a configured model without its key", errOut, code, "openai:gpt-5", "OPENAI_API_KEY")
}

func TestPrintModeSIGINTExits130(t *testing.T) {
	p := newPrintEnv(t, scriptFile(t, "print-sigint"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testkit.BuildCorvid(t), "run", "-p", "talk", "-m", "script:"+p.script)
	cmd.Env, cmd.Dir = p.env, p.workspace
	first := make(chan struct{})
	cmd.Stdout = &firstWrite{ch: first}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first:
	case <-ctx.Done():
		t.Fatal("no answer streamed")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("after SIGINT: %v, want exit 130", err)
	}
}

// firstWrite closes ch on the first write and discards everything.
type firstWrite struct {
	ch   chan struct{}
	once bool
}

func (w *firstWrite) Write(b []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.ch)
	}
	return len(b), nil
}

// A print-mode session is an ordinary stored session: an editor loads it over ACP.
func TestPrintModeSessionLoadsInAnEditor(t *testing.T) {
	env, home := testkit.IsolatedEnv(t)
	p := newPrintEnv(t, text(printAnswer, 5))
	p.env = env
	out, errOut, code := p.run("", "run", "-p", "remember this", "-m", "script:"+p.script, "--format", "json")
	var r printResult
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("exit %d, %s %s", code, out, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{
		Args: []string{"acp", "-m", "script:" + p.script},
		Env:  []string{"CORVID_HOME=" + filepath.Join(home, ".corvid")},
		Dir:  p.workspace,
	})
	s := &session{Editor: e, ctx: ctx, workspace: p.workspace}
	if _, rerr := s.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	replay := s.load(t, r.SessionID)
	if got := testkit.TextOf(replay, "user_message_chunk"); !strings.Contains(got, "remember this") {
		t.Errorf("replayed prompt %q", got)
	}
	if got := testkit.TextOf(replay, "agent_message_chunk"); got != printAnswer {
		t.Errorf("replayed answer %q, want %q", got, printAnswer)
	}
}

// Print mode starts shell children as acp does: without the provider keys in
// their environment, and with a key that reaches a tool's output redacted.
func TestPrintModeShellChildrenGetNoProviderKeys(t *testing.T) {
	const key = "sk-ant-print-mode-secret-0123456789"
	script := toolScript("shell", map[string]any{"command": "printenv ANTHROPIC_API_KEY; cat stray.txt; echo done"})
	p := newPrintEnv(t, script)
	p.env = append(p.env, "ANTHROPIC_API_KEY="+key)
	// A file in the workspace holds the key: a command that prints it shows it redacted.
	if err := os.WriteFile(filepath.Join(p.workspace, "stray.txt"), []byte(key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := p.run("", "run", "-p", "show the key", "-m", "script:"+p.script, "--format", "stream-json", "--yolo")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, "done") {
		t.Fatalf("the shell call did not run:\n%s", out)
	}
	if strings.Contains(out, key) || strings.Contains(errOut, key) {
		t.Errorf("the provider key reached print mode's output:\n%s\n%s", out, errOut)
	}
	if !strings.Contains(out, "[REDACTED]") {
		t.Errorf("the key a command printed was not redacted:\n%s", out)
	}
}
