// Package mcp is corvid's MCP client manager: it starts the MCP servers a
// session was given (the editor's mcpServers and the configured
// mcp_servers), and offers their tools as tool.Tools, their prompts as
// commands, their resources through the mcp_resource tool and their
// instructions for the system prompt.
//
// Start with Start, which connects to every server in parallel, waits at
// most Options.ReadyWait, and returns a Manager and the servers that failed
// (one sentence each, fit for the user); servers still starting join later.
// Or with Launch, which returns at once and reports every start outcome
// through the callbacks, and AwaitStart, which does the wait when the
// servers are first needed (a session's first prompt).
// Manager.Tools and Manager.Prompts always reflect the servers' current
// lists; Options.OnChange says when they changed, Options.OnNotice tells the
// user about a server's life (late start, crash, restart, giving up).
//
// Three transports: stdio (a child process in its own process group that
// corvid starts and reaps itself; its stderr sent to the logger line by
// line; stdout lines that are not JSON skipped; restarted with backoff when
// it exits; the whole group killed on Close), streamable HTTP and SSE
// (retried in the background when down at start, reconnected on the next
// call after the connection dropped). A call through a tool value held
// from before a crash is a failed tool result, never a Go error or a panic.
//
// Client capabilities: roots when Options.Roots is set, sampling when
// Options.Sample is, elicitation (the modes the client shows) when
// Options.Ask shows any (elicit.go).
package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/tool"
	"github.com/corvid-agent/corvid/internal/usererr"
)

// Transport types of Server.Type.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// Server is one MCP server to start.
type Server struct {
	Name string
	// Type is "stdio" (or ""), "http" or "sse".
	Type    string
	Command string
	Args    []string
	Env     []KV
	URL     string
	Headers []KV
	// StartupTimeout bounds this server's start; 0: Options.StartTimeout.
	StartupTimeout time.Duration
}

// KV is an environment variable or an HTTP header.
type KV struct{ Name, Value string }

// HeaderSecrets are the parts of servers' header values that are secrets
// (a bearer token, a gateway key; see llm.HeaderSecrets), for scrubbing
// and redaction.
func HeaderSecrets(servers []Server) []string {
	var out []string
	for _, s := range servers {
		for _, h := range s.Headers {
			out = append(out, llm.HeaderSecrets(h.Value)...)
		}
	}
	return out
}

func (s Server) kind() string {
	if s.Type == "" {
		return TypeStdio
	}
	return s.Type
}

// FromConfig turns configured mcp_servers entries into Servers, by name.
// An entry without a type is stdio if it has a command and http if it has a
// URL.
func FromConfig(m map[string]config.MCPServer) []Server {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]Server, 0, len(names))
	for _, name := range names {
		c := m[name]
		s := Server{Name: name, Type: c.Type, Command: c.Command, Args: slices.Clone(c.Args), URL: c.URL,
			Env: sortedKVs(c.Env), Headers: sortedKVs(c.Headers), StartupTimeout: c.StartupTimeout}
		if s.Type == "" {
			if c.Command == "" && c.URL != "" {
				s.Type = TypeHTTP
			} else {
				s.Type = TypeStdio
			}
		}
		out = append(out, s)
	}
	return out
}

func sortedKVs(m map[string]string) []KV {
	if len(m) == 0 {
		return nil
	}
	out := make([]KV, 0, len(m))
	for k, v := range m {
		out = append(out, KV{k, v})
	}
	slices.SortFunc(out, func(a, b KV) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Merge returns the editor's servers, then the configured servers whose
// names the editor did not use: the editor's list wins on name clashes.
// Within one list the first entry of a name wins.
func Merge(editor, configured []Server) []Server {
	seen := map[string]bool{}
	var out []Server
	for _, list := range [][]Server{editor, configured} {
		for _, s := range list {
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	return out
}

// Options configure Start.
type Options struct {
	// StartTimeout bounds each server's start (process start or HTTP
	// connection, and the MCP handshake) unless the server sets its own
	// StartupTimeout. Default 60s: a cold `npx -y` start downloads first.
	StartTimeout time.Duration
	// ReadyWait is how long Start (or AwaitStart) waits for the servers;
	// the ones still starting keep connecting in the background and are
	// reported through OnNotice when they are ready or failed. Default 5s.
	ReadyWait time.Duration
	// StopTimeout is how long Close lets a stdio server exit after its stdin
	// closed before its process group gets SIGTERM, and again before SIGKILL.
	// Default 1s.
	StopTimeout time.Duration
	// MaxRestarts bounds the restarts of a stdio server that exited (and
	// the retries of an HTTP or SSE server unreachable at start); after a
	// server ran for a minute its budget starts over. Default 5; negative:
	// never restart.
	MaxRestarts int
	// RestartBackoff is the wait before the first restart; it doubles with
	// each further attempt. Default 1s.
	RestartBackoff time.Duration
	// Logger receives stdio servers' stderr, line by line, and lifecycle
	// events. nil: discard.
	Logger *slog.Logger
	// OnChange is called, from any goroutine, when Tools or Prompts changed:
	// a server announced a new list, joined late, exited or was restarted.
	OnChange func()
	// OnNotice is called, from any goroutine, with a sentence for the user
	// about a server's life after Start returned: it crashed, was
	// restarted, joined late or gave up.
	OnNotice func(string)
	// Roots, if set, makes corvid advertise the roots capability and answer
	// roots/list with these directories (the session's cwd first). Call
	// Manager.SetRoots when they change.
	Roots []string
	// Sample, if set, answers servers' sampling/createMessage requests
	// (and corvid advertises sampling).
	Sample Sampler
	// Ask, if it shows elicitations, makes corvid advertise the modes it
	// shows and pass servers' elicitation/create on to the user.
	Ask tool.Asker
	// Dir is the working directory of stdio servers ("" = corvid's own).
	Dir string
	// ClientName and ClientVersion identify corvid to the servers.
	// Defaults: "corvid", "dev".
	ClientName, ClientVersion string
}

const (
	defaultStartTimeout   = 60 * time.Second
	defaultReadyWait      = 5 * time.Second
	defaultStopTimeout    = time.Second
	defaultMaxRestarts    = 5
	defaultRestartBackoff = time.Second
)

// Failure is a server that could not start. Err's text is one sentence for
// the user, naming the server.
type Failure struct {
	Server string
	Err    error
}

// Manager owns the live MCP sessions of one corvid session.
type Manager struct {
	opts  Options
	log   *slog.Logger
	conns []*conn // in the order the servers were given

	mu       sync.Mutex
	closed   bool
	rootDirs []string
	wg       sync.WaitGroup // background work: starts, restarts, refreshes
	closeErr error
	done     chan struct{} // closed when Close finished

	// secrets are the servers' header values: a server's refusal may quote
	// them, so notices, failures and logs are scrubbed of them.
	secrets []string

	// background: from Launch; every start outcome is reported through
	// the callbacks, not returned.
	background bool
	awaitMu    sync.Mutex
	awaited    bool // the start wait is over (guarded by awaitMu)
	lateTimer  *time.Timer
}

// Start connects to every server in parallel, each bounded by its start
// timeout, and waits at most opts.ReadyWait for them. A server that fails
// does not fail the others: it is reported in the returned Failures, in
// the order given. Servers still starting when Start returns keep going in
// the background. The servers live until Close, not until ctx ends; ctx
// only cuts the wait short.
func Start(ctx context.Context, servers []Server, opts Options) (*Manager, []Failure) {
	m, byIndex, errs := launch(servers, opts, false)
	deadline := time.Now().Add(m.opts.ReadyWait)
	var failures []Failure
	for i, s := range servers {
		c := byIndex[i]
		if c != nil {
			select {
			case <-c.started:
			case <-time.After(time.Until(deadline)):
			case <-ctx.Done():
			}
			if !c.markLate() {
				errs[i] = c.startErr
			}
			if errs[i] != nil {
				errs[i] = userErr(startFailed(s.Name, errs[i]).Error()+c.retryNote(0), errs[i])
			}
		}
		if errs[i] != nil {
			err := llm.ScrubError(errs[i], m.secrets)
			failures = append(failures, Failure{Server: s.Name, Err: err})
			m.log.Warn("mcp server failed to start", "server", s.Name, "error", err)
		}
	}
	m.awaited = true
	return m, failures
}

// Launch starts every server in parallel, like Start, but returns at once:
// the Failures are only the servers that could not be started at all (no
// command, a name listed twice). Every other outcome comes later through
// the options' callbacks: a server that fails to start is a notice
// (OnNotice), one that is up changes the lists (OnChange); one still
// starting Options.ReadyWait after Launch is reported late (a notice now,
// another when it is ready), as Start does. Call AwaitStart before the
// servers are first needed.
func Launch(servers []Server, opts Options) (*Manager, []Failure) {
	m, _, errs := launch(servers, opts, true)
	var failures []Failure
	for i, s := range servers {
		if errs[i] != nil {
			err := llm.ScrubError(errs[i], m.secrets)
			failures = append(failures, Failure{Server: s.Name, Err: err})
			m.log.Warn("mcp server failed to start", "server", s.Name, "error", err)
		}
	}
	return m, failures
}

// AwaitStart waits, the first time it is called, at most Options.ReadyWait
// for the servers Launch started to be up or failed, telling the user
// (OnNotice) when it has to wait at all; ctx cuts the wait short. A server
// still starting after that keeps starting in the
// background: the user is told it is (OnNotice), and again when it is ready
// or failed. Later calls (and calls on a Manager from Start) return at once.
func (m *Manager) AwaitStart(ctx context.Context) {
	if m == nil {
		return
	}
	m.awaitMu.Lock()
	defer m.awaitMu.Unlock()
	if m.awaited {
		return
	}
	m.awaited = true
	var starting []string
	for _, c := range m.conns {
		select {
		case <-c.started:
		default:
			starting = append(starting, fmt.Sprintf("%q", c.srv.Name))
		}
	}
	switch len(starting) {
	case 0:
		return
	case 1:
		m.notice(fmt.Sprintf("Waiting up to %s for MCP server %s to start.", m.opts.ReadyWait, starting[0]))
	default:
		m.notice(fmt.Sprintf("Waiting up to %s for MCP servers %s to start.", m.opts.ReadyWait, strings.Join(starting, ", ")))
	}
	timer := time.NewTimer(m.opts.ReadyWait)
	defer timer.Stop()
	for _, c := range m.conns {
		select {
		case <-c.started:
		case <-timer.C:
		case <-ctx.Done():
		}
		c.markLate()
	}
}

// launch makes the Manager and starts every valid server in the
// background; byIndex and errs follow servers' order (a nil conn: errs
// says why).
func launch(servers []Server, opts Options, background bool) (*Manager, []*conn, []error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = defaultStartTimeout
	}
	if opts.ReadyWait <= 0 {
		opts.ReadyWait = defaultReadyWait
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = defaultStopTimeout
	}
	switch {
	case opts.MaxRestarts == 0:
		opts.MaxRestarts = defaultMaxRestarts
	case opts.MaxRestarts < 0:
		opts.MaxRestarts = 0
	}
	if opts.RestartBackoff <= 0 {
		opts.RestartBackoff = defaultRestartBackoff
	}
	if opts.ClientName == "" {
		opts.ClientName = "corvid"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	secrets := HeaderSecrets(servers)
	m := &Manager{opts: opts, log: llm.ScrubLogger(opts.Logger, secrets), rootDirs: slices.Clone(opts.Roots), done: make(chan struct{}), background: background,
		secrets: secrets}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}

	errs := make([]error, len(servers))
	byIndex := make([]*conn, len(servers))
	seen := map[string]bool{}
	for i, s := range servers {
		if err := validate(s, seen); err != nil {
			errs[i] = err
			continue
		}
		seen[s.Name] = true
		c := newConn(m, s)
		byIndex[i] = c
		m.conns = append(m.conns, c)
	}
	for _, c := range m.conns {
		m.goBackground(c.run)
	}
	if background && len(m.conns) > 0 {
		// As with Start: a server not up within ReadyWait of its launch
		// is reported late, whether or not anyone waits for it.
		m.lateTimer = time.AfterFunc(opts.ReadyWait, func() {
			for _, c := range m.conns {
				c.markLate()
			}
		})
	}
	return m, byIndex, errs
}

// validate checks what can be checked before starting s.
func validate(s Server, seen map[string]bool) error {
	switch {
	case s.Name == "":
		return errors.New("an MCP server without a name cannot be started")
	case seen[s.Name]:
		return userErr(fmt.Sprintf("MCP server %q is listed twice; the first entry is used", s.Name), nil)
	}
	switch s.kind() {
	case TypeStdio:
		if s.Command == "" {
			return startFailed(s.Name, errors.New("no command given"))
		}
	case TypeHTTP, TypeSSE:
		if s.URL == "" {
			return startFailed(s.Name, errors.New("no URL given"))
		}
	default:
		return startFailed(s.Name, fmt.Errorf("transport type %q is not supported", s.Type))
	}
	return nil
}

// userErr is an error whose text is a sentence for the user; it wraps the
// underlying cause for errors.Is.
func userErr(msg string, cause error) error { return usererr.Wrap(cause, msg) }

func startFailed(server string, err error) error {
	return userErr(fmt.Sprintf("MCP server %q failed to start: %s", server, describe(err)), err)
}

// describe words a session or network error for the user: the layers of
// "sending the request failed: " go, and an address loses its query and
// user info, where tokens hide.
func describe(err error) string {
	if _, ok := err.(*usererr.Error); ok {
		return err.Error()
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		msg := uerr.Err.Error()
		var op *net.OpError
		if errors.As(uerr.Err, &op) && op.Err != nil {
			msg = op.Err.Error()
		}
		addr := uerr.URL
		if u, perr := url.Parse(addr); perr == nil {
			u.User, u.RawQuery, u.Fragment = nil, "", ""
			addr = u.String()
		}
		return fmt.Sprintf("cannot connect to %s (%s)", addr, oneLine(msg))
	}
	s := err.Error()
	for _, noise := range []string{"sending the request failed: "} {
		s = strings.ReplaceAll(s, noise, "")
	}
	return oneLine(s)
}

// oneLine keeps an error fit for a one-sentence message.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// Tools returns the current tools of every live server, in server order,
// each server's tools by name, then (if any live server has resources)
// the mcp_resource tool. Names are model-safe and unique (a server tool is
// always <server>__<tool>, so none is mcp_resource).
func (m *Manager) Tools() []tool.Tool {
	if m == nil {
		return nil
	}
	var out []tool.Tool
	namer := newToolNamer()
	resources := false
	for _, c := range m.conns {
		defs := c.currentTools()
		for _, d := range defs {
			out = append(out, newTool(c, d, namer.name(c.srv.Name, d.Name)))
		}
		resources = resources || c.offersResources()
	}
	if resources {
		out = append(out, resourceTool{m})
	}
	return out
}

// Prompt is a server's prompt, offered to the user as a command.
type Prompt struct {
	Server, Name, Description string
	Arguments                 []PromptArg
}

// PromptArg is one argument of a prompt.
type PromptArg struct {
	Name, Description string
	Required          bool
}

// Prompts returns the current prompts of every live server, in server
// order, each server's prompts by name.
func (m *Manager) Prompts() []Prompt {
	if m == nil {
		return nil
	}
	var out []Prompt
	for _, c := range m.conns {
		for _, p := range c.currentPrompts() {
			pr := Prompt{Server: c.srv.Name, Name: p.Name, Description: cmp.Or(p.Description, p.Title)}
			for _, a := range p.Arguments {
				if a == nil {
					continue
				}
				pr.Arguments = append(pr.Arguments, PromptArg{Name: a.Name, Description: cmp.Or(a.Description, a.Title), Required: a.Required})
			}
			out = append(out, pr)
		}
	}
	return out
}

// CommandName is the editor command of a server's prompt:
// <server>:<prompt>, each sanitised like tool names (every character
// outside [a-zA-Z0-9_-] becomes '_'), so it can be typed.
func CommandName(server, prompt string) string {
	return sanitize(server) + ":" + sanitize(prompt)
}

// GetPrompt expands a server's prompt with args and returns its messages
// flattened to text for the model.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	c := m.conn(server)
	if c == nil {
		return "", fmt.Errorf("there is no running MCP server named %q", server)
	}
	return c.getPrompt(ctx, name, args)
}

func (m *Manager) conn(name string) *conn {
	if m == nil {
		return nil
	}
	for _, c := range m.conns {
		if c.srv.Name == name {
			return c
		}
	}
	return nil
}

// Close closes every session. A stdio server gets its stdin closed, then
// (after StopTimeout each) SIGTERM and SIGKILL to its whole process group;
// whatever is left of the group once the server exited is killed too, so
// no descendant survives. Servers still starting are stopped the same way.
// Close returns once every server process was reaped. It is idempotent,
// and a second call waits for the first to finish.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		<-m.done
		return m.closeErr
	}
	m.closed = true
	m.mu.Unlock()
	if m.lateTimer != nil {
		m.lateTimer.Stop()
	}

	errs := make([]error, len(m.conns))
	var wg sync.WaitGroup
	for i, c := range m.conns {
		wg.Go(func() { errs[i] = c.close() })
	}
	wg.Wait()
	m.wg.Wait()
	// A start that was under way when close ran adopted nothing and
	// stopped its own process; close again catches a session adopted in
	// between.
	for _, c := range m.conns {
		if err := c.closeLate(); err != nil {
			errs = append(errs, err)
		}
	}
	m.closeErr = errors.Join(errs...)
	close(m.done)
	return m.closeErr
}

// isClosed reports whether Close has begun.
func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// goBackground runs f unless the manager is closing; Close waits for it.
func (m *Manager) goBackground(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Go(f)
	return true
}

func (m *Manager) changed() {
	if m.opts.OnChange != nil && !m.isClosed() {
		m.opts.OnChange()
	}
}

// notice tells the user about a server's life, unless closing.
func (m *Manager) notice(text string) {
	text = llm.Scrub(text, m.secrets)
	m.log.Info("mcp notice", "text", text)
	if m.opts.OnNotice != nil && !m.isClosed() {
		m.opts.OnNotice(text)
	}
}

// PIDs returns the process ids of every stdio server process that was
// started (restarts included), whether or not it is still running.
func (m *Manager) PIDs() []int {
	if m == nil {
		return nil
	}
	var out []int
	for _, c := range m.conns {
		c.mu.Lock()
		out = append(out, c.pids...)
		c.mu.Unlock()
	}
	return out
}
