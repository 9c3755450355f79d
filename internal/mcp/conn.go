package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
)

// conn is one server: its live session (nil while it is down) and the
// lists last read from it. It answers what the server sends on its own
// (handler.go).
type conn struct {
	m   *Manager
	srv Server

	// life bounds everything the connection does; cancelled by close.
	life       context.Context
	cancelLife context.CancelFunc

	reconnect sync.Mutex // one reconnection at a time
	lost      chan struct{}

	// started is closed on the first outcome of the start (startErr).
	started  chan struct{}
	startErr error
	everUp   bool // run: a start succeeded once

	mu           sync.Mutex
	cs           *session
	proc         *process           // stdio: the process of cs
	sessCancel   context.CancelFunc // ends what cs's connection started
	down         error              // why cs is nil
	exit         string             // stdio: how the last process ended, e.g. "exit status 3"
	closed       bool
	late         bool // the start wait ended before the first outcome: report it
	restarting   bool // a stdio restart is pending
	gaveUp       bool // no more restarts
	pids         []int
	tools        []*toolDef
	prompts      []*promptDef
	resources    []*resourceDef
	templates    []*resourceTemplate
	instructions string
	refreshing   bool // a refresh loop is running
	pending      bool // another refresh was asked for

	progMu   sync.Mutex
	progress map[string]func(*progressParams)

	callMu sync.Mutex
	calls  []*runningCall // tool calls in flight, oldest first (elicit.go)
}

func newConn(m *Manager, s Server) *conn {
	c := &conn{m: m, srv: s, started: make(chan struct{}), lost: make(chan struct{}, 1),
		progress: map[string]func(*progressParams){}}
	c.life, c.cancelLife = context.WithCancel(context.Background())
	return c
}

// remoteRetryCap is the longest wait between two attempts to reach an HTTP
// or SSE server that has not come up yet.
const remoteRetryCap = 15 * time.Second

// run starts the server and keeps it up: a stdio server that exits is
// restarted (bounded, with backoff); an HTTP or SSE server that cannot be
// reached at first is retried the same way, and after that every
// remoteRetryCap for as long as the session lasts. Every crash, restart and late
// start is reported through Options.OnNotice.
func (c *conn) run() {
	attempt := 0
	first := true
	for {
		began := time.Now()
		err := c.startOnce()
		c.reportStart(first, err, attempt)
		first = false
		if c.life.Err() != nil {
			return
		}
		if err == nil {
			c.everUp = true
			if c.srv.kind() != TypeStdio {
				return // from here on, a lost HTTP session reconnects on the next call
			}
			select {
			case <-c.life.Done():
				return
			case <-c.lost:
			}
			if time.Since(began) > time.Minute {
				attempt = 0 // it ran a good while: a fresh budget
			}
		} else if c.srv.kind() == TypeStdio && !c.everUp {
			return // a command that cannot start at all is not retried
		}
		attempt++
		wait, again := c.nextWait(attempt, err)
		if !again {
			return
		}
		select {
		case <-c.life.Done():
			return
		case <-time.After(wait):
		}
	}
}

// reportStart records and announces the outcome of one start: the first
// one releases Start (and becomes a notice when it came late or in the
// background); a restart says it is running again.
func (c *conn) reportStart(first bool, err error, attempt int) {
	if !first {
		if err == nil {
			c.m.changed()
			c.m.notice(fmt.Sprintf("MCP server %q is running again (%s).", c.srv.Name, c.summary()))
		} else if c.life.Err() == nil {
			c.m.log.Warn("mcp server restart failed", "server", c.srv.Name, "error", err)
		}
		return
	}
	c.mu.Lock()
	c.startErr = err
	late := c.late
	// Under mu: Start sees either the outcome or sets late (and
	// then no longer looks).
	close(c.started)
	c.mu.Unlock()
	switch {
	case err != nil && (late || c.m.background):
		c.m.notice(startFailed(c.srv.Name, err).Error() + c.retryNote(attempt))
	case err == nil && (late || c.m.background):
		c.m.changed() // the tools join before the notice says so
		if late {
			c.m.notice(fmt.Sprintf("MCP server %q is ready (%s).", c.srv.Name, c.summary()))
		}
	}
}

// nextWait is how long to wait before start attempt number attempt, or
// false when corvid gives up. A remote server that has not come up yet has
// no tools the model could call to try it again, so corvid keeps trying
// for the session's life, at most once every remoteRetryCap; a stdio
// command that keeps dying is given up on.
func (c *conn) nextWait(attempt int, err error) (time.Duration, bool) {
	remote := c.srv.kind() != TypeStdio
	if attempt > c.m.opts.MaxRestarts && !remote {
		c.mu.Lock()
		c.gaveUp, c.restarting = true, false
		c.mu.Unlock()
		c.m.notice(fmt.Sprintf("MCP server %q stopped%s; corvid gave up restarting it after %d attempts.", c.srv.Name, c.exitNote(), c.m.opts.MaxRestarts))
		return 0, false
	}
	if attempt == c.m.opts.MaxRestarts+1 {
		c.m.notice(fmt.Sprintf("MCP server %q is still unreachable; corvid keeps trying every %s.", c.srv.Name, remoteRetryCap))
	}
	wait := c.m.opts.RestartBackoff << min(attempt-1, 16)
	if remote && wait > remoteRetryCap {
		wait = remoteRetryCap
	}
	if !remote && err == nil {
		c.m.notice(fmt.Sprintf("MCP server %q stopped%s; corvid restarts it in %s (attempt %d of %d).", c.srv.Name, c.exitNote(), wait, attempt, c.m.opts.MaxRestarts))
	}
	return wait, true
}

// markLate ends the wait for c's start: if c is still starting it is
// marked late (its outcome becomes a notice), the user is told (once), and
// markLate says true.
func (c *conn) markLate() bool {
	c.mu.Lock()
	late := false
	select {
	case <-c.started:
	default:
		late = !c.late
		c.late = true
	}
	c.mu.Unlock()
	if late {
		c.m.notice(fmt.Sprintf("MCP server %q is still starting; its tools join when it is ready.", c.srv.Name))
	}
	return late
}

func (c *conn) retryNote(attempt int) string {
	if c.srv.kind() == TypeStdio || c.m.opts.MaxRestarts <= attempt {
		return ""
	}
	return "; corvid keeps retrying in the background"
}

func (c *conn) exitNote() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exit != "" {
		return " (" + c.exit + ")"
	}
	return ""
}

// summary counts what the server offers, for a notice.
func (c *conn) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := fmt.Sprintf("%d tools", len(c.tools))
	if len(c.prompts) > 0 {
		s += fmt.Sprintf(", %d prompts", len(c.prompts))
	}
	return s
}

// startOnce connects and reads the first lists, bounded by the server's
// start timeout.
func (c *conn) startOnce() error {
	deadline := time.Now().Add(c.timeout())
	cs, cancel, proc, err := c.connect(c.life, deadline)
	if err != nil {
		return err
	}
	// Adopted before the first listing, so that a list_changed arriving
	// meanwhile is not lost.
	if !c.adopt(cs, cancel, proc) {
		return errors.New("shut down")
	}
	lctx, lcancel := context.WithDeadline(c.life, deadline)
	err = c.reload(lctx, cs)
	lcancel()
	if err != nil {
		c.mu.Lock()
		mine := c.cs == cs
		c.mu.Unlock()
		if mine {
			c.drop(cs, err)
			if proc != nil {
				proc.signalGroup(syscall.SIGKILL)
			}
		}
		return err
	}
	return nil
}

func (c *conn) timeout() time.Duration {
	if c.srv.StartupTimeout > 0 {
		return c.srv.StartupTimeout
	}
	return c.m.opts.StartTimeout
}

// connect makes one attempt to open a session, bounded by deadline and ctx.
// The session itself outlives ctx. The error describes the cause in words
// for the user, without the server's name.
func (c *conn) connect(ctx context.Context, deadline time.Time) (*session, context.CancelFunc, *process, error) {
	var tr transport
	var proc *process
	// The SSE transport ties its event stream to the context it is made
	// with, so that context must live as long as the session; the
	// deadline is enforced by cancelling it instead.
	attempt, cancel := context.WithCancel(c.life)
	switch c.srv.kind() {
	case TypeStdio:
		p, err := startProcess(c.srv, c.m.opts.Dir, c.m.log)
		if err != nil {
			cancel()
			return nil, nil, nil, err
		}
		proc = p
		c.mu.Lock()
		c.pids = append(c.pids, p.pid())
		c.mu.Unlock()
		tr = p.transport()
	}

	var timedOut atomic.Bool
	abort := func() {
		cancel()
		if proc != nil {
			proc.signalGroup(syscall.SIGKILL)
		}
	}
	timer := time.AfterFunc(time.Until(deadline), func() { timedOut.Store(true); abort() })
	stopParent := context.AfterFunc(ctx, abort)
	cs, err := c.open(attempt, tr)
	timerStopped, parentStopped := timer.Stop(), stopParent()
	if err == nil && (!timerStopped || !parentStopped) {
		cs.Close()
		err = errors.New("aborted")
	}
	if err == nil {
		return cs, cancel, proc, nil
	}
	abort()
	exit := ""
	if proc != nil {
		exit = proc.waitExit(5 * time.Second)
	}
	switch {
	case timedOut.Load():
		return nil, nil, nil, userErr(fmt.Sprintf("no answer within %s (set startup_timeout to allow longer)", c.timeout()), err)
	case ctx.Err() != nil:
		return nil, nil, nil, ctx.Err()
	}
	var ee *exec.Error
	var pe *fs.PathError
	if errors.As(err, &ee) || errors.As(err, &pe) {
		return nil, nil, nil, err
	}
	if exit != "" {
		msg := "it exited (" + exit + ")"
		if line := proc.lastStderr(500 * time.Millisecond); line != "" {
			msg += ": " + line
		}
		return nil, nil, nil, userErr(msg, err)
	}
	return nil, nil, nil, err
}

// open makes the transport of an HTTP or SSE server (a stdio one's is
// given) and runs the MCP handshake on it.
func (c *conn) open(ctx context.Context, tr transport) (*session, error) {
	if tr == nil {
		o := httpOptions{URL: c.srv.URL, Client: c.httpClient()}
		var err error
		if c.srv.kind() == TypeSSE {
			tr, err = newSSETransport(ctx, o)
		} else {
			tr, err = newStreamableTransport(ctx, o)
		}
		if err != nil {
			return nil, err
		}
	}
	cs := newSession(tr, c, c.m.log)
	if err := cs.initialize(ctx, c.initializeParams()); err != nil {
		cs.Close()
		return nil, err
	}
	return cs, nil
}

// initializeParams name corvid and what it offers: roots when it has any,
// sampling when it samples, elicitation in the modes the editor shows.
func (c *conn) initializeParams() initializeParams {
	p := initializeParams{ClientInfo: implementation{Name: c.m.opts.ClientName, Version: c.m.opts.ClientVersion}}
	if c.m.opts.Roots != nil {
		p.Capabilities.Roots = &rootsCapability{ListChanged: true}
	}
	if c.m.opts.Sample != nil {
		p.Capabilities.Sampling = &struct{}{}
	}
	p.Capabilities.Elicitation = elicitCaps(c.m.opts.Ask)
	return p
}

// httpClient sends the server's configured headers with every request,
// and follows redirects only within the server URL's origin: the headers
// are set on every request the transport sends, so a redirect elsewhere
// would carry a token there (issue #35). It has no overall timeout: an
// SSE stream lasts as long as the session.
func (c *conn) httpClient() *http.Client {
	if len(c.srv.Headers) == 0 {
		return nil
	}
	return llm.HTTPClient(c.srv.URL, &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: c.srv.Headers}})
}

type headerTransport struct {
	base    http.RoundTripper
	headers []KV
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for _, h := range t.headers {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Set(h.Name, h.Value)
	}
	return t.base.RoundTrip(req)
}

// adopt makes cs the live session and watches for its end.
func (c *conn) adopt(cs *session, cancel context.CancelFunc, proc *process) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cs.Close()
		cancel()
		if proc != nil {
			proc.stop(c.m.opts.StopTimeout)
		}
		return false
	}
	c.cs, c.sessCancel, c.proc, c.down, c.restarting = cs, cancel, proc, nil, false
	c.instructions = cs.init.Instructions
	c.mu.Unlock()
	c.m.goBackground(func() {
		err := cs.Wait()
		if proc != nil {
			// The connection ended; the process should follow. One that
			// lingers with a broken connection is ended.
			if proc.waitExit(time.Second) == "" {
				proc.signalGroup(syscall.SIGKILL)
				proc.waitExit(5 * time.Second)
			}
			c.mu.Lock()
			if c.proc == proc {
				c.exit = proc.exitText()
			}
			c.mu.Unlock()
		}
		if err == nil {
			err = errors.New("the server closed the connection")
		}
		c.lose(cs, err)
	})
	return true
}

// lose forgets cs if it is still the live session. A stdio server that is
// gone takes its tools with it (until it is restarted); an HTTP one keeps
// them, to reconnect.
func (c *conn) lose(cs *session, why error) {
	c.mu.Lock()
	if c.cs != cs || c.closed {
		c.mu.Unlock()
		return
	}
	c.cs, c.down = nil, why
	if c.proc != nil {
		if e := c.proc.exitText(); e != "" {
			c.exit = e
		}
	}
	cancel := c.sessCancel
	c.sessCancel = nil
	exit := c.exit
	stdio := c.srv.kind() == TypeStdio
	if stdio && !c.gaveUp && c.m.opts.MaxRestarts > 0 {
		c.restarting = true
	}
	c.mu.Unlock()
	cancel()
	if stdio {
		c.m.log.Warn("mcp server stopped", "server", c.srv.Name, "exit", exit, "error", why)
		select {
		case c.lost <- struct{}{}:
		default:
		}
		c.m.changed()
		return
	}
	c.m.log.Warn("mcp server connection lost; reconnecting on the next call", "server", c.srv.Name, "error", why)
}

// live is a session and, for stdio, its process.
type live struct {
	cs   *session
	proc *process
}

// session returns the live session; for an HTTP or SSE server that is down
// it makes one attempt to reconnect (fresh reports that it did).
func (c *conn) session(ctx context.Context) (l live, fresh bool, err error) {
	c.mu.Lock()
	l, closed, exit, restarting := live{c.cs, c.proc}, c.closed, c.exit, c.restarting
	c.mu.Unlock()
	switch {
	case closed:
		return live{}, false, userErr(fmt.Sprintf("MCP server %q was shut down", c.srv.Name), nil)
	case l.cs != nil:
		return l, false, nil
	case c.srv.kind() == TypeStdio:
		msg := fmt.Sprintf("MCP server %q is not running", c.srv.Name)
		if exit != "" {
			msg += " (it exited: " + exit + ")"
		}
		if restarting {
			msg += "; corvid is restarting it"
		}
		return live{}, false, userErr(msg, nil)
	}

	c.reconnect.Lock()
	defer c.reconnect.Unlock()
	c.mu.Lock()
	cs := c.cs
	c.mu.Unlock()
	if cs != nil {
		return live{cs: cs}, false, nil // reconnected by another call meanwhile
	}
	c.m.log.Info("mcp server reconnecting", "server", c.srv.Name)
	cs, cancel, _, err := c.connect(ctx, time.Now().Add(c.timeout()))
	if err != nil {
		if ctx.Err() != nil {
			return live{}, false, ctx.Err()
		}
		return live{}, false, userErr(fmt.Sprintf("MCP server %q is unreachable: %s", c.srv.Name, describe(err)), err)
	}
	if !c.adopt(cs, cancel, nil) {
		return live{}, false, userErr(fmt.Sprintf("MCP server %q was shut down", c.srv.Name), nil)
	}
	c.scheduleRefresh() // the server may have changed while away
	return live{cs: cs}, true, nil
}

// reload reads the tool, prompt and resource lists of cs.
func (c *conn) reload(ctx context.Context, cs *session) error {
	caps := cs.init.Capabilities
	tools := []*toolDef{}
	if has(caps.Tools) {
		list, err := cs.tools(ctx)
		if err != nil {
			return fmt.Errorf("listing its tools failed: %w", err)
		}
		for _, t := range list {
			if t != nil {
				tools = append(tools, t)
			}
		}
	}
	var prompts []*promptDef
	if has(caps.Prompts) {
		list, err := cs.prompts(ctx)
		if err != nil {
			// Prompts are a convenience: a server that cannot list
			// them still serves its tools.
			c.m.log.Warn("mcp server could not list its prompts", "server", c.srv.Name, "error", err)
			list = nil
		}
		for _, p := range list {
			if p != nil {
				prompts = append(prompts, p)
			}
		}
	}
	var resources []*resourceDef
	var templates []*resourceTemplate
	if has(caps.Resources) {
		list, err := cs.resources(ctx)
		if err != nil {
			c.m.log.Warn("mcp server could not list its resources", "server", c.srv.Name, "error", err)
			list = nil
		}
		for _, r := range list {
			if r != nil && len(resources) < maxResourcesListed {
				resources = append(resources, r)
			}
		}
		tlist, err := cs.resourceTemplates(ctx)
		if err != nil {
			tlist = nil
		}
		for _, r := range tlist {
			if r != nil {
				templates = append(templates, r)
			}
		}
	}
	slices.SortStableFunc(tools, func(a, b *toolDef) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(prompts, func(a, b *promptDef) int { return strings.Compare(a.Name, b.Name) })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs == cs || c.cs == nil {
		c.tools, c.prompts, c.resources, c.templates = tools, prompts, resources, templates
	}
	return nil
}

// maxResourcesListed bounds the resources a server's list keeps.
const maxResourcesListed = 500

// scheduleRefresh rereads the lists in the background, coalescing bursts
// of list_changed notifications, then reports the change.
func (c *conn) scheduleRefresh() {
	c.mu.Lock()
	c.pending = true
	if c.refreshing || c.closed {
		c.mu.Unlock()
		return
	}
	c.refreshing = true
	c.mu.Unlock()
	if !c.m.goBackground(c.refreshLoop) {
		c.mu.Lock()
		c.refreshing = false
		c.mu.Unlock()
	}
}

func (c *conn) refreshLoop() {
	for {
		c.mu.Lock()
		cs := c.cs
		if !c.pending || c.closed || cs == nil {
			c.refreshing, c.pending = false, false
			c.mu.Unlock()
			return
		}
		c.pending = false
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(c.life, c.timeout())
		err := c.reload(ctx, cs)
		cancel()
		if err != nil {
			c.m.log.Warn("mcp server lists not refreshed", "server", c.srv.Name, "error", err)
			continue
		}
		c.m.changed()
	}
}

// up reports whether the server's lists may be offered now.
func (c *conn) up() bool {
	return !c.closed && (c.cs != nil || c.srv.kind() != TypeStdio)
}

// currentTools is what the model may call now.
func (c *conn) currentTools() []*toolDef {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.up() {
		return nil
	}
	return c.tools
}

func (c *conn) currentPrompts() []*promptDef {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.up() {
		return nil
	}
	return c.prompts
}

// close ends the session. For a stdio server: stdin closes, then after
// StopTimeout the group gets SIGTERM, after another SIGKILL; and once the
// server is gone, anything left in its group is killed. It returns once
// the process was reaped.
func (c *conn) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cs, cancel, proc := c.cs, c.sessCancel, c.proc
	c.cs, c.sessCancel = nil, nil
	c.mu.Unlock()

	done := make(chan struct{})
	go func() {
		if cs != nil {
			cs.Close()
		}
		close(done)
	}()
	var err error
	if proc != nil {
		if !proc.stop(c.m.opts.StopTimeout) {
			err = fmt.Errorf("MCP server %q (pid %d) did not exit after SIGKILL", c.srv.Name, proc.pid())
		}
		proc.signalGroup(syscall.SIGKILL)
	}
	waitFor(done, c.m.opts.StopTimeout) // the HTTP session's DELETE, politely bounded
	if cancel != nil {
		cancel()
	}
	c.cancelLife()
	return err
}

// closeLate stops a session adopted after close ran (adopt refuses once
// closed, so this only matters for one racing with it).
func (c *conn) closeLate() error {
	c.mu.Lock()
	cs, proc := c.cs, c.proc
	c.cs = nil
	c.mu.Unlock()
	if cs != nil {
		go cs.Close()
	}
	if proc != nil && !proc.stop(c.m.opts.StopTimeout) {
		return fmt.Errorf("MCP server %q (pid %d) did not exit after SIGKILL", c.srv.Name, proc.pid())
	}
	return nil
}

func waitFor(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
