package sdkclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/corvid-agent/corvid/internal/testkit"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// corvid is one `corvid acp` process driven through the SDK's client-side connection.
type corvid struct {
	*acp.ClientSideConnection
	client    *recorder
	workspace string // the session cwd; empty at start
	home      string // HOME, CORVID_HOME and XDG dirs live here

	cmd     *exec.Cmd
	stdin   *os.File
	stdout  *os.File
	stderr  *syncBuffer
	exited  chan struct{} // closed when the process has been waited for
	waitErr error
}

// textScript is a script with one response streaming thinking then text, chunkSize runes at a time.
func textScript(thinking, text string, chunkSize, delayMs int) map[string]any {
	var parts []any
	if thinking != "" {
		parts = append(parts, map[string]any{"type": "thinking", "text": thinking})
	}
	parts = append(parts, map[string]any{"type": "text", "text": text})
	return map[string]any{
		"chunkSize": chunkSize,
		"delayMs":   delayMs,
		"responses": []any{map[string]any{"parts": parts}},
	}
}

// startOpts says how to start corvid; the zero value is a fresh home and workspace.
type startOpts struct {
	home string   // reuse this HOME (to share a store between processes)
	args []string // extra arguments after `acp -m script:FILE`
}

// start spawns `corvid acp -m script:scriptPath` in a fresh workspace and connects the
// SDK client to it. The cleanup closes stdin and fails the test unless corvid exits 0.
func start(t *testing.T, scriptPath string, opts startOpts) *corvid {
	t.Helper()
	bin := corvidBin(t)
	c := &corvid{
		workspace: t.TempDir(),
		home:      opts.home,
		stderr:    &syncBuffer{},
		exited:    make(chan struct{}),
	}
	if c.home == "" {
		c.home = t.TempDir()
	}
	c.client = newRecorder(t, c.workspace)

	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(bin, append([]string{"acp", "-m", "script:" + scriptPath}, opts.args...)...)
	c.cmd.Dir = c.workspace
	c.cmd.Env = testkit.IsolatedEnvAt(c.home, "CORVID_KEYRING=off")
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = inR, outW, c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	c.stdin, c.stdout = inW, outR
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	}()

	c.ClientSideConnection = acp.NewClientSideConnection(c.client, c.stdin, c.stdout)
	c.SetLogger(slog.New(c.client.logHandler()))
	t.Cleanup(func() { c.stop(t) })
	return c
}

// stop closes stdin, as an editor does when it is done, and expects a clean exit.
func (c *corvid) stop(t *testing.T) {
	c.stdin.Close()
	select {
	case <-c.exited:
		if c.waitErr != nil {
			t.Errorf("corvid exited with %v after stdin EOF, want exit 0", c.waitErr)
		}
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
		t.Errorf("corvid still running 5s after stdin EOF; killed")
	}
	c.stdout.Close()
	c.client.check()
	if t.Failed() {
		t.Logf("corvid stderr:\n%s", c.stderr.String())
	}
}

// ctx is a per-test deadline so that a hung agent fails the test instead of the run.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ready initializes with caps and opens one session in the workspace.
func (c *corvid) ready(ctx context.Context, t *testing.T, caps acp.ClientCapabilities) acp.SessionId {
	t.Helper()
	c.client.setCaps(caps)
	if _, err := c.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c.newSession(ctx, t)
}

func (c *corvid) newSession(ctx context.Context, t *testing.T) acp.SessionId {
	t.Helper()
	resp, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: c.workspace, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	if resp.SessionId == "" {
		t.Fatal("session/new returned an empty sessionId")
	}
	return resp.SessionId
}

// prompt sends one text prompt and fails the test on a transport or JSON-RPC error.
func (c *corvid) prompt(ctx context.Context, t *testing.T, sid acp.SessionId, text string) acp.PromptResponse {
	t.Helper()
	resp, err := c.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		t.Fatalf("session/prompt: %v", err)
	}
	return resp
}

// recorder is the acp.Client: it records every update and request, answers permission
// requests with a per-test policy, serves fs/* inside the workspace, and notes any call
// corvid should not have made (a capability that was not advertised).
type recorder struct {
	t         testing.TB
	workspace string

	mu          sync.Mutex
	caps        acp.ClientCapabilities
	updates     []acp.SessionNotification
	changed     chan struct{} // closed and replaced on every recorded update
	answer      acp.PermissionOptionKind
	hook        func(context.Context, acp.RequestPermissionRequest) acp.RequestPermissionResponse
	permissions []acp.RequestPermissionRequest
	writes      []acp.WriteTextFileRequest
	problems    []string // protocol violations seen by the client or logged by the SDK
}

var _ acp.Client = (*recorder)(nil)

func newRecorder(t testing.TB, workspace string) *recorder {
	return &recorder{t: t, workspace: workspace, changed: make(chan struct{}), answer: acp.PermissionOptionKindRejectOnce}
}

func (r *recorder) setCaps(caps acp.ClientCapabilities) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.caps = caps
}

// answerPermissions sets the option kind picked for every later permission request.
func (r *recorder) answerPermissions(kind acp.PermissionOptionKind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = kind
}

func (r *recorder) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// check fails the test for every problem recorded so far.
func (r *recorder) check() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.problems {
		r.t.Errorf("client saw: %s", p)
	}
	r.problems = nil
}

func (r *recorder) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, n)
	close(r.changed)
	r.changed = make(chan struct{})
	return nil
}

// snapshot returns the updates recorded so far for sid.
func (r *recorder) snapshot(sid acp.SessionId) []acp.SessionNotification {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []acp.SessionNotification
	for _, n := range r.updates {
		if n.SessionId == sid {
			out = append(out, n)
		}
	}
	return out
}

// all returns every update recorded so far, in arrival order.
func (r *recorder) all() []acp.SessionNotification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]acp.SessionNotification(nil), r.updates...)
}

// waitFor blocks until cond holds for the updates of sid, or ctx ends.
func (r *recorder) waitFor(ctx context.Context, sid acp.SessionId, cond func([]acp.SessionNotification) bool) error {
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if cond(r.snapshot(sid)) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// onPermission makes hook answer every later permission request instead of the kind policy.
func (r *recorder) onPermission(hook func(context.Context, acp.RequestPermissionRequest) acp.RequestPermissionResponse) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hook = hook
}

func (r *recorder) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	r.mu.Lock()
	r.permissions = append(r.permissions, p)
	kind, hook := r.answer, r.hook
	r.mu.Unlock()
	if hook != nil {
		return hook(ctx, p), nil
	}
	for _, o := range p.Options {
		if o.Kind == kind {
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
				Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId},
			}}, nil
		}
	}
	r.problem("session/request_permission offers no %q option: %+v", kind, p.Options)
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
}

func (r *recorder) permissionRequests() []acp.RequestPermissionRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]acp.RequestPermissionRequest(nil), r.permissions...)
}

// inWorkspace checks an fs/* path is absolute and under the workspace.
func (r *recorder) inWorkspace(method, path string) error {
	if !filepath.IsAbs(path) {
		r.problem("%s with a relative path %q", method, path)
		return fmt.Errorf("path must be absolute: %q", path)
	}
	if rel, err := filepath.Rel(r.workspace, path); err != nil || strings.HasPrefix(rel, "..") {
		r.problem("%s outside the workspace: %q", method, path)
		return fmt.Errorf("path outside the workspace: %q", path)
	}
	return nil
}

func (r *recorder) ReadTextFile(_ context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	r.mu.Lock()
	advertised := r.caps.Fs.ReadTextFile
	r.mu.Unlock()
	if !advertised {
		r.problem("fs/read_text_file called, but the client did not advertise it")
		return acp.ReadTextFileResponse{}, errors.New("not advertised")
	}
	if err := r.inWorkspace("fs/read_text_file", p.Path); err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	return acp.ReadTextFileResponse{Content: string(b)}, nil
}

func (r *recorder) WriteTextFile(_ context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	r.mu.Lock()
	advertised := r.caps.Fs.WriteTextFile
	r.writes = append(r.writes, p)
	r.mu.Unlock()
	if !advertised {
		r.problem("fs/write_text_file called, but the client did not advertise it")
		return acp.WriteTextFileResponse{}, errors.New("not advertised")
	}
	if err := r.inWorkspace("fs/write_text_file", p.Path); err != nil {
		return acp.WriteTextFileResponse{}, err
	}
	if err := os.MkdirAll(filepath.Dir(p.Path), 0o755); err != nil {
		return acp.WriteTextFileResponse{}, err
	}
	return acp.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
}

func (r *recorder) fsWrites() []acp.WriteTextFileRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]acp.WriteTextFileRequest(nil), r.writes...)
}

// No scenario advertises terminal support, so any terminal/* call is a violation.

func (r *recorder) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	r.problem("terminal/create called, but the client did not advertise terminal")
	return acp.CreateTerminalResponse{}, errors.New("not advertised")
}

func (r *recorder) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	r.problem("terminal/kill called, but the client did not advertise terminal")
	return acp.KillTerminalResponse{}, errors.New("not advertised")
}

func (r *recorder) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	r.problem("terminal/output called, but the client did not advertise terminal")
	return acp.TerminalOutputResponse{}, errors.New("not advertised")
}

func (r *recorder) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	r.problem("terminal/release called, but the client did not advertise terminal")
	return acp.ReleaseTerminalResponse{}, errors.New("not advertised")
}

func (r *recorder) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	r.problem("terminal/wait_for_exit called, but the client did not advertise terminal")
	return acp.WaitForTerminalExitResponse{}, errors.New("not advertised")
}

// logHandler records the SDK's error logs as problems: the SDK logs, rather than
// returns, a frame it cannot parse and a notification it cannot decode or validate,
// so without this an invalid session/update would be an invisible one.
func (r *recorder) logHandler() slog.Handler { return sdkLog{r} }

type sdkLog struct{ r *recorder }

func (h sdkLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h sdkLog) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h sdkLog) WithGroup(string) slog.Handler                { return h }
func (h sdkLog) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.r.problem("acp-go-sdk logged %s: %s", rec.Level, b.String())
	return nil
}

// syncBuffer collects stderr; exec copies into it from its own goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// promptAsync sends a prompt in the background; the result arrives on the channel.
func promptAsync(ctx context.Context, c *corvid, sid acp.SessionId, text string) <-chan promptResult {
	ch := make(chan promptResult, 1)
	go func() {
		resp, err := c.Prompt(ctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		ch <- promptResult{resp, err, time.Now()}
	}()
	return ch
}

type promptResult struct {
	resp acp.PromptResponse
	err  error
	at   time.Time
}
