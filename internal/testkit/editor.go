package testkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// MaxLine is the longest stdout line the editor accepts from the agent (64 MiB).
const MaxLine = 64 << 20

// IDStyle selects the ids the editor puts on its own requests.
type IDStyle int

const (
	IDsFromZero IDStyle = iota // 0, 1, 2, … (TypeScript SDK, acpx)
	IDsFromOne                 // 1, 2, 3, … (Emacs acp.el, coder/acp-go-sdk)
	IDsString                  // "req-0", "req-1", …
)

// Options configures [Start]. The zero value is a well-behaved editor that allows every
// permission once and serves fs/terminal requests in-process.
type Options struct {
	Args []string // arguments after the binary, e.g. {"acp", "-m", "script:FILE"}
	Env  []string // extra KEY=VALUE entries; they override the isolated defaults
	Dir  string   // working directory of the agent; default: the isolated home

	// InheritHome keeps the test process's HOME and XDG variables. By default the agent
	// gets a fresh temporary HOME, CORVID_HOME and XDG dirs, and provider credentials and
	// base URLs are removed from its environment.
	InheritHome bool

	IDs IDStyle

	Permission  PermissionHandler  // default AllowOnce()
	Elicitation ElicitationHandler // default: decline
	// Handlers overrides or adds agent→client methods (including "_ext" methods). The
	// capability check still applies to the built-in methods.
	Handlers map[string]Handler
	// NeverAnswer records agent requests but never answers them (old Gas City).
	NeverAnswer bool
	// KeepWritesInMemory keeps fs/write_text_file in the editor's buffers only; by default
	// writes are saved to disk too, as Zed does.
	KeepWritesInMemory bool

	ExitTimeout time.Duration // how long Close waits for exit; default 10 s

	// Dialect "codebuddy" accepts the one non-schema frame of corvid's
	// --compat codebuddy, a session/update whose update is CodeBuddy's
	// session_end; every other frame is still checked against the schema.
	Dialect string
}

// Handler answers one agent→client request.
type Handler func(ctx context.Context, params json.RawMessage) (any, *RPCError)

// Direction marks a transcript line.
type Direction string

const (
	ToAgent   Direction = "-->" // written by the editor to the agent's stdin
	FromAgent Direction = "<--" // read from the agent's stdout
)

// Line is one line of the transcript.
type Line struct {
	Seq  int
	Dir  Direction
	Text string
}

func (l Line) String() string { return string(l.Dir) + " " + l.Text }

// Editor is a fake ACP client connected to one agent process. Its methods are safe for
// concurrent use.
type Editor struct {
	t    testing.TB
	opts Options
	sch  *acpkit.Schema
	proc *acpkit.Proc
	home string
	dir  string
	env  []string

	ctx    context.Context // cancelled when the editor shuts down
	cancel context.CancelFunc

	writeMu     sync.Mutex
	stdin       io.WriteCloser
	stdinClosed bool

	stdoutDone chan struct{}
	stderrDone chan struct{}
	exited     chan struct{}
	exitCode   int
	exitAt     time.Time
	handlers   sync.WaitGroup

	mu            sync.Mutex
	changed       chan struct{} // closed and replaced whenever recorded state changes
	lines         []Line
	rawCursor     int // next transcript index NextRaw looks at
	eof           bool
	stderr        bytes.Buffer
	nextID        int
	sent          map[string]string // id key → method of the editor's requests
	responses     []*response
	notifications []Message
	updates       []Update
	updateCursor  int
	caps          clientCaps
	inflight      map[string]context.CancelFunc // agent→client requests being answered
	sessionCancel map[string]chan struct{}      // closed when the editor sends session/cancel
	permissions   []*PermissionCall
	permCursor    int
	elicits       []*ElicitationCall
	elicitCursor  int
	requests      []Message // every agent→client request
	fs            fsOverlay
	fsCalls       []FSCall
	terms         terminals
	termCalls     []TerminalCall
}

type response struct {
	msg      Message
	method   string
	consumed bool
}

// Start spawns bin with opts and returns the connected editor. The process is killed and
// reaped by a t.Cleanup if the test does not Close it.
func Start(t testing.TB, bin string, opts Options) *Editor {
	t.Helper()
	sch, err := acpkit.LoadSchema()
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	if opts.Permission == nil {
		opts.Permission = AllowOnce()
	}
	if opts.ExitTimeout == 0 {
		opts.ExitTimeout = 10 * time.Second
	}
	// A short home path keeps unix socket paths under the 104/108-byte limit.
	home, err := os.MkdirTemp("", "ck")
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	e := &Editor{
		t:             t,
		opts:          opts,
		sch:           sch,
		home:          home,
		changed:       make(chan struct{}),
		sent:          map[string]string{},
		inflight:      map[string]context.CancelFunc{},
		sessionCancel: map[string]chan struct{}{},
		stdoutDone:    make(chan struct{}),
		stderrDone:    make(chan struct{}),
		exited:        make(chan struct{}),
	}
	e.fs.init()
	e.terms.init()
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.env = buildEnv(os.Environ(), home, opts)
	e.dir = opts.Dir
	if e.dir == "" {
		e.dir = home
	}

	p, err := acpkit.Spawn(append([]string{bin}, opts.Args...), e.dir, e.env)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	e.proc, e.stdin = p, p.Stdin
	go e.readStdout(p.Stdout)
	go e.readStderr(p.Stderr)
	go func() {
		err := p.Err()
		e.mu.Lock()
		e.exitAt = time.Now()
		e.exitCode = p.Cmd.ProcessState.ExitCode()
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			fmt.Fprintf(&e.stderr, "testkit: wait: %v\n", err)
		}
		e.mu.Unlock()
		close(e.exited)
	}()
	t.Cleanup(e.cleanup)
	return e
}

// buildEnv returns the agent's environment: the test's, minus anything that could reach
// the real home or a real provider, plus the isolated dirs, plus opts.Env.
func buildEnv(base []string, home string, opts Options) []string {
	var env []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		drop := !opts.InheritHome && (k == "HOME" || strings.HasPrefix(k, "XDG_") ||
			strings.HasPrefix(k, "CORVID_") || strings.HasSuffix(k, "_API_KEY") ||
			strings.HasSuffix(k, "_BASE_URL") || strings.HasSuffix(k, "_AUTH_TOKEN"))
		if !drop {
			env = append(env, kv)
		}
	}
	if !opts.InheritHome {
		env = append(env,
			"HOME="+home,
			"CORVID_HOME="+filepath.Join(home, ".corvid"),
			"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
			"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
			"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
			"XDG_RUNTIME_DIR="+filepath.Join(home, "run"),
		)
		_ = os.MkdirAll(filepath.Join(home, "run"), 0o700)
	}
	return append(env, opts.Env...)
}

// Home is the agent's isolated HOME (also the default working directory).
func (e *Editor) Home() string { return e.home }

// Dir is the agent's working directory.
func (e *Editor) Dir() string { return e.dir }

// Env is the agent's environment.
func (e *Editor) Env() []string { return append([]string(nil), e.env...) }

// PID is the agent's process id.
func (e *Editor) PID() int { return e.proc.Cmd.Process.Pid }

// killProcess kills the agent's process group.
func (e *Editor) killProcess() { e.proc.Kill() }

// Stderr returns what the agent wrote to stderr so far.
func (e *Editor) Stderr() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stderr.String()
}

// WaitStderr waits until the agent's stderr holds substr, or ctx ends
// (false): a log line may reach the pipe after the frame that follows it.
func (e *Editor) WaitStderr(ctx context.Context, substr string) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(e.Stderr(), substr) {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

func (e *Editor) readStderr(r *os.File) {
	defer close(e.stderrDone)
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			e.mu.Lock()
			e.stderr.Write(buf[:n])
			e.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (e *Editor) readStdout(r *os.File) {
	defer close(e.stdoutDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine+1)
	for sc.Scan() {
		e.handleLine(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			e.t.Errorf("testkit: agent wrote a stdout line longer than %d bytes", MaxLine)
		} else if !errors.Is(err, os.ErrClosed) {
			e.t.Errorf("testkit: read agent stdout: %v", err)
		}
	}
	e.mu.Lock()
	e.eof = true
	e.broadcastLocked()
	e.mu.Unlock()
}

// broadcastLocked wakes every waiter. e.mu must be held.
func (e *Editor) broadcastLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// errEOF means the agent closed stdout before the awaited thing happened.
var errEOF = errors.New("agent closed stdout")

// waitFor blocks until cond (called with e.mu held) is true, ctx is done, or stdout
// reached EOF with cond still false.
func (e *Editor) waitFor(ctx context.Context, cond func() bool) error {
	for {
		e.mu.Lock()
		if cond() {
			e.mu.Unlock()
			return nil
		}
		if e.eof {
			e.mu.Unlock()
			return errEOF
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close closes the agent's stdin and waits for it to exit. It returns the exit code and
// how long the agent took to exit after stdin was closed. An agent that does not exit
// within Options.ExitTimeout fails the test and is killed (code -1).
func (e *Editor) Close() (code int, took time.Duration) {
	e.t.Helper()
	start := time.Now()
	e.closeStdin()
	select {
	case <-e.exited:
	case <-time.After(e.opts.ExitTimeout):
		e.t.Errorf("testkit: agent did not exit within %v after stdin was closed", e.opts.ExitTimeout)
		e.killProcess()
		<-e.exited
		e.shutdown()
		return -1, time.Since(start)
	}
	e.shutdown()
	e.mu.Lock()
	defer e.mu.Unlock()
	took = e.exitAt.Sub(start)
	if took < 0 {
		took = 0
	}
	return e.exitCode, took
}

// Kill sends SIGKILL to the agent (and its process group) and waits for it to exit.
func (e *Editor) Kill() {
	e.killProcess()
	<-e.exited
	e.shutdown()
}

// Exited is closed when the agent process has exited.
func (e *Editor) Exited() <-chan struct{} { return e.exited }

// ExitCode is the agent's exit code, valid once Exited is closed (-1 if killed by a signal).
func (e *Editor) ExitCode() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.exitCode
}

func (e *Editor) closeStdin() {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	if !e.stdinClosed {
		e.stdinClosed = true
		e.stdin.Close()
	}
}

// shutdown runs after the process exited: it stops handlers and terminals and waits for
// the readers, so nothing reports to t after the test ends.
func (e *Editor) shutdown() {
	e.closeStdin()
	e.cancel()
	e.terms.killAll()
	select {
	case <-e.stdoutDone:
	case <-time.After(5 * time.Second):
		// A grandchild holds stdout open; the agent itself is gone.
	}
	select {
	case <-e.stderrDone:
	case <-time.After(5 * time.Second):
	}
	e.handlers.Wait()
}

func (e *Editor) cleanup() {
	select {
	case <-e.exited:
	default:
		e.killProcess()
		<-e.exited
	}
	e.shutdown()
	if e.t.Failed() {
		e.t.Logf("testkit: transcript (%s = editor→agent, %s = agent→editor):\n%s", ToAgent, FromAgent, e.dumpTranscript(400))
		e.t.Logf("testkit: agent stderr:\n%s", shorten(e.Stderr()))
	}
	os.RemoveAll(e.home)
}

func (e *Editor) dumpTranscript(maxLines int) string {
	lines := e.Transcript()
	var b strings.Builder
	if len(lines) > maxLines {
		fmt.Fprintf(&b, "… %d earlier lines omitted\n", len(lines)-maxLines)
		lines = lines[len(lines)-maxLines:]
	}
	for _, l := range lines {
		b.WriteString(string(l.Dir) + " " + shorten(l.Text) + "\n")
	}
	return b.String()
}

// Transcript returns every line written and read so far, in order.
func (e *Editor) Transcript() []Line {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Line(nil), e.lines...)
}

// TranscriptString renders the transcript one line per message with direction markers.
func (e *Editor) TranscriptString() string {
	var b strings.Builder
	for _, l := range e.Transcript() {
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// NextRaw returns the next line the agent wrote that NextRaw has not returned yet.
func (e *Editor) NextRaw(ctx context.Context) (Line, error) {
	var got Line
	err := e.waitFor(ctx, func() bool {
		for ; e.rawCursor < len(e.lines); e.rawCursor++ {
			if e.lines[e.rawCursor].Dir == FromAgent {
				got = e.lines[e.rawCursor]
				e.rawCursor++
				return true
			}
		}
		return false
	})
	return got, err
}

// Notifications returns every notification the agent sent so far.
func (e *Editor) Notifications() []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Message(nil), e.notifications...)
}

// Requests returns every request the agent sent so far.
func (e *Editor) Requests() []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Message(nil), e.requests...)
}
