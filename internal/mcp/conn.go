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

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is one server: its client, its live session (nil while it is down)
// and the tool and prompt lists last read from it.
type conn struct {
	m    *Manager
	srv  Server
	sdk  *sdk.Client
	proc *process // stdio only; set before the Manager is returned

	// life bounds everything the connection does; cancelled by close.
	life       context.Context
	cancelLife context.CancelFunc

	reconnect sync.Mutex // one reconnection at a time

	mu         sync.Mutex
	cs         *sdk.ClientSession
	sessCancel context.CancelFunc // ends what cs's connection started
	down       error              // why cs is nil
	exit       string             // stdio: how the process ended, e.g. "exit status 3"
	closed     bool
	tools      []*sdk.Tool
	prompts    []*sdk.Prompt
	refreshing bool // a refresh loop is running
	pending    bool // another refresh was asked for
}

func newConn(m *Manager, s Server) *conn {
	c := &conn{m: m, srv: s}
	c.life, c.cancelLife = context.WithCancel(context.Background())
	onList := func() { c.scheduleRefresh() }
	c.sdk = sdk.NewClient(&sdk.Implementation{Name: m.opts.ClientName, Version: m.opts.ClientVersion}, &sdk.ClientOptions{
		Logger: m.log,
		// Not nil: the go-sdk's default advertises roots, which corvid
		// does not serve. No sampling or elicitation handlers either.
		Capabilities:             &sdk.ClientCapabilities{},
		ToolListChangedHandler:   func(context.Context, *sdk.ToolListChangedRequest) { onList() },
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) { onList() },
	})
	return c
}

// start connects and reads the first tool and prompt lists. Its error is a
// sentence for the user.
func (c *conn) start(ctx context.Context) error {
	deadline := time.Now().Add(c.m.opts.StartTimeout)
	cs, cancel, err := c.connect(ctx, deadline)
	if err != nil {
		return startFailed(c.srv.Name, err)
	}
	// Adopted before the first listing, so that a list_changed arriving
	// meanwhile is not lost.
	c.adopt(cs, cancel)
	lctx, lcancel := context.WithDeadline(ctx, deadline)
	err = c.reload(lctx, cs)
	lcancel()
	if err != nil {
		c.close()
		return startFailed(c.srv.Name, err)
	}
	return nil
}

// connect makes one attempt to open a session, bounded by deadline and ctx.
// The session itself outlives ctx. The error describes the cause in words
// for the user, without the server's name.
func (c *conn) connect(ctx context.Context, deadline time.Time) (*sdk.ClientSession, context.CancelFunc, error) {
	var tr sdk.Transport
	var proc *process
	switch c.srv.kind() {
	case TypeStdio:
		p, err := newProcess(c.srv, c.m.opts.Dir, c.m.log)
		if err != nil {
			return nil, nil, err
		}
		proc = p
		// The go-sdk's own SIGTERM (to the leader only) comes well after
		// close has signalled the whole group.
		tr = p.transport(10 * c.m.opts.StopTimeout)
	case TypeHTTP:
		tr = &sdk.StreamableClientTransport{Endpoint: c.srv.URL, HTTPClient: c.httpClient()}
	case TypeSSE:
		tr = &sdk.SSEClientTransport{Endpoint: c.srv.URL, HTTPClient: c.httpClient()}
	}

	// The SSE transport ties its event stream to the context given to
	// Connect, so that context must live as long as the session; the
	// deadline is enforced by cancelling it instead.
	attempt, cancel := context.WithCancel(c.life)
	var timedOut atomic.Bool
	abort := func() {
		cancel()
		if proc != nil {
			proc.signalGroup(syscall.SIGKILL)
		}
	}
	timer := time.AfterFunc(time.Until(deadline), func() { timedOut.Store(true); abort() })
	stopParent := context.AfterFunc(ctx, abort)
	cs, err := c.sdk.Connect(attempt, tr, nil)
	timerStopped, parentStopped := timer.Stop(), stopParent()
	if err == nil && (!timerStopped || !parentStopped) {
		cs.Close()
		err = errors.New("aborted")
	}
	if err == nil {
		if proc != nil {
			c.proc = proc
		}
		return cs, cancel, nil
	}
	abort()
	if proc != nil {
		proc.abandon()
	}
	switch {
	case timedOut.Load():
		return nil, nil, &userError{fmt.Sprintf("no answer within %s", c.m.opts.StartTimeout), err}
	case ctx.Err() != nil:
		return nil, nil, ctx.Err()
	}
	var ee *exec.Error
	var pe *fs.PathError
	if errors.As(err, &ee) || errors.As(err, &pe) {
		return nil, nil, err
	}
	if proc != nil && proc.pid() > 0 {
		// The go-sdk reaped the process before Connect returned.
		if st := proc.exitText(); st != "" {
			msg := "it exited (" + st + ")"
			if line := proc.lastStderr(500 * time.Millisecond); line != "" {
				msg += ": " + line
			}
			return nil, nil, &userError{msg, err}
		}
	}
	return nil, nil, err
}

// httpClient sends the server's configured headers with every request.
// It has no overall timeout: an SSE stream lasts as long as the session.
func (c *conn) httpClient() *http.Client {
	if len(c.srv.Headers) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: c.srv.Headers}}
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
func (c *conn) adopt(cs *sdk.ClientSession, cancel context.CancelFunc) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cs.Close()
		cancel()
		return false
	}
	c.cs, c.sessCancel, c.down = cs, cancel, nil
	c.mu.Unlock()
	c.m.goBackground(func() {
		err := cs.Wait()
		if c.proc != nil {
			// The go-sdk reaps the process before the session ends.
			c.mu.Lock()
			c.exit = c.proc.exitText()
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
// gone takes its tools with it; an HTTP one keeps them, to reconnect.
func (c *conn) lose(cs *sdk.ClientSession, why error) {
	c.mu.Lock()
	if c.cs != cs || c.closed {
		c.mu.Unlock()
		return
	}
	c.cs, c.down = nil, why
	cancel := c.sessCancel
	c.sessCancel = nil
	exit := c.exit
	c.mu.Unlock()
	cancel()
	if c.srv.kind() == TypeStdio {
		c.m.log.Warn("mcp server stopped", "server", c.srv.Name, "exit", exit, "error", why)
		c.m.changed()
		return
	}
	c.m.log.Warn("mcp server connection lost; reconnecting on the next call", "server", c.srv.Name, "error", why)
}

// session returns the live session; for an HTTP or SSE server that is down
// it makes one attempt to reconnect (fresh reports that it did).
func (c *conn) session(ctx context.Context) (cs *sdk.ClientSession, fresh bool, err error) {
	c.mu.Lock()
	cs, closed, exit := c.cs, c.closed, c.exit
	c.mu.Unlock()
	switch {
	case closed:
		return nil, false, &userError{fmt.Sprintf("MCP server %q was shut down", c.srv.Name), nil}
	case cs != nil:
		return cs, false, nil
	case c.srv.kind() == TypeStdio:
		msg := fmt.Sprintf("MCP server %q is not running", c.srv.Name)
		if exit != "" {
			msg += " (it exited: " + exit + ")"
		}
		return nil, false, &userError{msg, nil}
	}

	c.reconnect.Lock()
	defer c.reconnect.Unlock()
	c.mu.Lock()
	cs = c.cs
	c.mu.Unlock()
	if cs != nil {
		return cs, false, nil // reconnected by another call meanwhile
	}
	c.m.log.Info("mcp server reconnecting", "server", c.srv.Name)
	cs, cancel, err := c.connect(ctx, time.Now().Add(c.m.opts.StartTimeout))
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, &userError{fmt.Sprintf("MCP server %q is unreachable: %s", c.srv.Name, describe(err)), err}
	}
	if !c.adopt(cs, cancel) {
		return nil, false, &userError{fmt.Sprintf("MCP server %q was shut down", c.srv.Name), nil}
	}
	c.scheduleRefresh() // the server may have changed while away
	return cs, true, nil
}

// reload reads the tool and prompt lists of cs.
func (c *conn) reload(ctx context.Context, cs *sdk.ClientSession) error {
	var caps *sdk.ServerCapabilities
	if ir := cs.InitializeResult(); ir != nil {
		caps = ir.Capabilities
	}
	var tools []*sdk.Tool
	if caps != nil && caps.Tools != nil {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("listing its tools failed: %w", err)
			}
			if t != nil {
				tools = append(tools, t)
			}
		}
	}
	var prompts []*sdk.Prompt
	if caps != nil && caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				// Prompts are a convenience: a server that cannot list
				// them still serves its tools.
				c.m.log.Warn("mcp server could not list its prompts", "server", c.srv.Name, "error", err)
				prompts = nil
				break
			}
			if p != nil {
				prompts = append(prompts, p)
			}
		}
	}
	slices.SortStableFunc(tools, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(prompts, func(a, b *sdk.Prompt) int { return strings.Compare(a.Name, b.Name) })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs == cs || c.cs == nil {
		c.tools, c.prompts = tools, prompts
	}
	return nil
}

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
		ctx, cancel := context.WithTimeout(c.life, c.m.opts.StartTimeout)
		err := c.reload(ctx, cs)
		cancel()
		if err != nil {
			c.m.log.Warn("mcp server lists not refreshed", "server", c.srv.Name, "error", err)
			continue
		}
		c.m.changed()
	}
}

// currentTools is what the model may call now.
func (c *conn) currentTools() []*sdk.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || (c.cs == nil && c.srv.kind() == TypeStdio) {
		return nil
	}
	return c.tools
}

func (c *conn) currentPrompts() []*sdk.Prompt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || (c.cs == nil && c.srv.kind() == TypeStdio) {
		return nil
	}
	return c.prompts
}

func (c *conn) pid() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.pid()
}

// close ends the session. For a stdio server: stdin closes, then after
// StopTimeout the group gets SIGTERM, after another SIGKILL; and once the
// server is gone, anything left in its group is killed.
func (c *conn) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cs, cancel := c.cs, c.sessCancel
	c.cs, c.sessCancel = nil, nil
	c.mu.Unlock()

	done := make(chan struct{})
	go func() {
		if cs != nil {
			cs.Close()
		}
		close(done)
	}()
	stop := c.m.opts.StopTimeout
	var err error
	if p := c.proc; p != nil {
		if !waitFor(done, stop) {
			p.signalGroup(syscall.SIGTERM)
			if !waitFor(done, stop) {
				p.signalGroup(syscall.SIGKILL)
				if !waitFor(done, 5*time.Second) {
					err = fmt.Errorf("MCP server %q (pid %d) did not exit after SIGKILL", c.srv.Name, p.pid())
				}
			}
		}
		p.signalGroup(syscall.SIGKILL)
	} else {
		waitFor(done, stop) // the HTTP session's DELETE, politely bounded
	}
	if cancel != nil {
		cancel()
	}
	c.cancelLife()
	return err
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
