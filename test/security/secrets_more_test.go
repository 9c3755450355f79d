package security

// The further attacks on secrets that issue #35 asked for ("Also attack"):
// a key pasted into a prompt, the headers of HTTP MCP servers, the modes of
// the store's -wal/-shm files while corvid runs, a stack dump, and shell
// commands the editor runs in its terminals.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// A key pasted into a prompt is stored and sent as typed (prompts are not
// redacted); the user is told so in the conversation, and the log says so.
func TestPromptHoldingAConfiguredKeyWarnsTheUser(t *testing.T) {
	script := rtScript(t, rtText("noted"))
	c := rtStart(t, script, testkit.Options{Env: []string{"ANTHROPIC_API_KEY=" + attackKey}})
	sid := c.newSessionIn(t, c.workspace)
	if stop, rerr := c.Prompt(c.ctx, sid, "my key is "+attackKey+", use it"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if frames := c.TranscriptString(); !strings.Contains(frames, "Your prompt contains a configured API key") {
		t.Errorf("the user was not told that the prompt holds a key")
	}
	wait, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	if !c.WaitStderr(wait, "a prompt contains a configured key") {
		t.Errorf("the log does not say that a prompt holds a key:\n%s", c.Stderr())
	}
	if strings.Contains(c.Stderr(), attackKey) {
		t.Errorf("the warning put the key in the log")
	}
	// A prompt without a key says nothing of the kind.
	sid2 := c.newSessionIn(t, c.workspace)
	if _, rerr := c.Prompt(c.ctx, sid2, "hello"); rerr != nil {
		t.Fatal(rerr)
	}
	if n := strings.Count(c.TranscriptString(), "Your prompt contains a configured API key"); n != 1 {
		t.Errorf("the warning was given %d times, want once", n)
	}
}

// An HTTP MCP server's configured headers (a bearer token) must not follow
// a redirect to another origin: the transport sets them on every request
// it sends, so Go's own Authorization stripping does not help.
func TestMCPServerHeadersDoNotFollowARedirectToAnotherOrigin(t *testing.T) {
	const token = "mcp-SECRET-0123456789"
	thief := newRecorder(t, http.StatusOK, `{}`)
	var asked = make(chan struct{}, 16)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		asked <- struct{}{}
	}))
	t.Cleanup(server.Close)
	c := rtStart(t, rtScript(t, rtText("done")), testkit.Options{})
	var sn struct {
		SessionID string `json:"sessionId"`
	}
	c.MustCall(c.ctx, "session/new", map[string]any{"cwd": c.workspace, "mcpServers": []any{map[string]any{
		"type": "http", "name": "remote", "url": server.URL + "/mcp",
		"headers": []any{map[string]any{"name": "Authorization", "value": "Bearer " + token},
			map[string]any{"name": "X-Mcp-Token", "value": token}}}}}, &sn)
	select {
	case <-asked:
	case <-c.ctx.Done():
		t.Fatal("corvid never contacted the MCP server; the test checks nothing")
	}
	// The redirect is followed (or not) within the request that got it;
	// the prompt's round trip gives it ample time.
	if _, rerr := c.Prompt(c.ctx, sn.SessionID, "hi"); rerr != nil {
		t.Fatal(rerr)
	}
	time.Sleep(200 * time.Millisecond)
	for _, h := range thief.got() {
		for name, vs := range h {
			if strings.Contains(strings.Join(vs, " "), token) {
				t.Errorf("the other origin received the MCP token in %s", name)
			}
		}
	}
}

// The session store's database, -wal and -shm files are the user's alone
// while corvid runs (SQLite creates the last two beside the first, with
// its mode), in a directory only the user can enter.
func TestStoreFilesArePrivateWhileCorvidRuns(t *testing.T) {
	c := rtStart(t, rtScript(t, rtText("stored")), testkit.Options{})
	sid := c.newSessionIn(t, c.workspace)
	if _, rerr := c.Prompt(c.ctx, sid, "hi"); rerr != nil {
		t.Fatal(rerr)
	}
	var files []string
	_ = filepath.WalkDir(c.Home(), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "sessions.db") {
			files = append(files, p)
		}
		return nil
	})
	var wal, shm bool
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		wal = wal || strings.HasSuffix(p, "-wal")
		shm = shm || strings.HasSuffix(p, "-shm")
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v while corvid runs: others can read the session store", p, fi.Mode().Perm())
		}
		dir, err := os.Stat(filepath.Dir(p))
		if err != nil {
			t.Fatal(err)
		}
		if dir.Mode().Perm()&0o077 != 0 {
			t.Errorf("the store's directory %s is %v", filepath.Dir(p), dir.Mode().Perm())
		}
	}
	if !wal || !shm {
		t.Fatalf("no -wal and -shm beside the store while corvid runs (%q); the test checks nothing", files)
	}
}

// A Go stack dump (SIGQUIT, or a crash with GOTRACEBACK) prints argument
// words, not the strings they point to: no key reaches stderr. corvid is
// non-dumpable, so no core file holds one either.
func TestStackDumpPrintsNoKey(t *testing.T) {
	c := rtStart(t, rtScript(t, rtText("hi")), testkit.Options{Env: []string{"ANTHROPIC_API_KEY=" + attackKey, "GOTRACEBACK=all"}})
	sid := c.newSessionIn(t, c.workspace)
	if _, rerr := c.Prompt(c.ctx, sid, "hi"); rerr != nil {
		t.Fatal(rerr)
	}
	if err := syscall.Kill(c.PID(), syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.Stderr(), "goroutine ") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_, _ = c.Close()
	if !strings.Contains(c.Stderr(), "goroutine ") {
		t.Fatalf("SIGQUIT printed no stack dump; the test checks nothing:\n%s", c.Stderr())
	}
	if strings.Contains(c.Stderr(), attackKey) || strings.Contains(c.Stderr(), "PROCSECRET") {
		t.Errorf("the stack dump printed the key")
	}
}

// A shell command the editor runs (terminal/*): corvid asks for it with no
// environment of its own, and what the command prints is redacted before
// it reaches the frames corvid writes, the store and the model. (The
// editor's own environment is the editor's: this fake editor gives its
// terminals corvid's launch environment, key included, as a careless host
// might.)
func TestEditorTerminalGetsNoKeyFromCorvidAndItsOutputIsRedacted(t *testing.T) {
	script := rtScript(t, rtTool("shell", map[string]any{"command": "printenv ANTHROPIC_API_KEY; echo printed"}), rtText("done"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := testkit.Start(t, rtBinary(t), testkit.Options{Dir: t.TempDir(), ExitTimeout: 5 * time.Second,
		Args: []string{"acp", "-m", "script:" + script, "--yolo"}, Env: []string{"ANTHROPIC_API_KEY=" + attackKey}})
	if _, rerr := e.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	var sn struct {
		SessionID string `json:"sessionId"`
	}
	e.MustCall(ctx, "session/new", map[string]any{"cwd": e.Dir(), "mcpServers": []any{}}, &sn)
	if stop, rerr := e.Prompt(ctx, sn.SessionID, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	var created, fromAgent strings.Builder
	for _, l := range e.Transcript() {
		if l.Dir != testkit.FromAgent {
			continue
		}
		fromAgent.WriteString(l.Text)
		if strings.Contains(l.Text, `"terminal/create"`) {
			created.WriteString(l.Text)
		}
	}
	if created.Len() == 0 {
		t.Fatal("the shell command did not run in an editor terminal; the test checks nothing")
	}
	var req struct {
		Params struct {
			Env []struct{ Name, Value string } `json:"env"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(created.String()), &req); err != nil {
		t.Fatal(err)
	}
	for _, kv := range req.Params.Env {
		if strings.Contains(kv.Name, "API_KEY") || strings.Contains(kv.Value, attackKey) {
			t.Errorf("corvid passed %s to the editor's terminal", kv.Name)
		}
	}
	if strings.Contains(fromAgent.String(), attackKey) {
		t.Errorf("a frame corvid wrote holds the key the editor's terminal printed")
	}
	_, _ = e.Close()
	redacted := strings.Contains(fromAgent.String(), "[REDACTED]")
	_ = filepath.WalkDir(e.Home(), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), attackKey) {
			t.Errorf("%s holds the key the editor's terminal printed", p)
		}
		redacted = redacted || strings.Contains(string(b), "[REDACTED]")
		return nil
	})
	if !redacted {
		t.Errorf("no [REDACTED] in the frames or the store: the terminal's output never came back; the test checks nothing")
	}
}

// An HTTP MCP server that refuses corvid with a message quoting the
// request's headers: the token the editor declared for it reaches neither
// the user's notices nor the log, and a tool that prints it is redacted.
func TestMCPServerTokenStaysOutOfNoticesLogsAndToolOutput(t *testing.T) {
	const token = "mcp-SECRET-9876543210"
	server := newRecorder(t, http.StatusUnauthorized, `{"error":"bad credentials: Authorization: Bearer `+token+`"}`)
	half := len(token) / 2
	script := rtScript(t, rtTool("shell", map[string]any{"command": "printf 'got %s%s\\n' " + token[:half] + " " + token[half:]}), rtText("done"))
	c := rtStart(t, script, testkit.Options{}, "--yolo", "--log-level", "debug")
	var sn struct {
		SessionID string `json:"sessionId"`
	}
	c.MustCall(c.ctx, "session/new", map[string]any{"cwd": c.workspace, "mcpServers": []any{map[string]any{
		"type": "http", "name": "remote", "url": server.URL + "/mcp",
		"headers": []any{map[string]any{"name": "Authorization", "value": "Bearer " + token}}}}}, &sn)
	if stop, rerr := c.Prompt(c.ctx, sn.SessionID, "go"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if len(server.got()) == 0 {
		t.Fatal("corvid never contacted the MCP server; the test checks nothing")
	}
	_, _ = c.Close()
	var b strings.Builder // what corvid wrote (the editor's own session/new holds the token)
	for _, l := range c.Transcript() {
		if l.Dir == testkit.FromAgent {
			b.WriteString(l.Text + "\n")
		}
	}
	frames := b.String()
	if !strings.Contains(frames, "got [REDACTED]") {
		t.Errorf("tool output printing the MCP token was not redacted")
	}
	for where, text := range map[string]string{"the frames": frames, "the log": c.Stderr()} {
		if strings.Contains(text, token) {
			t.Errorf("%s hold the MCP server's token", where)
		}
	}
}
