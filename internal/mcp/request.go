package mcp

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// callTool calls a tool. Its error is ctx's, or a sentence for the model.
// progress, if set, receives the server's notifications/progress for the
// call.
func (c *conn) callTool(ctx context.Context, name string, args map[string]any, progress func(*progressParams)) (*callToolResult, error) {
	var res *callToolResult
	err := c.do(ctx, fmt.Sprintf("the call to %q", name), func(cs *session) error {
		p := callToolParams{Name: name, Arguments: args}
		if progress != nil {
			token := c.watchProgress(progress)
			defer c.unwatchProgress(token)
			p.Meta = &requestMeta{ProgressToken: token}
		}
		res = nil
		return cs.call(ctx, "tools/call", p, &res)
	})
	if err == nil && res == nil {
		res = &callToolResult{}
	}
	return res, err
}

// getPrompt expands a prompt. Its error is ctx's or a sentence for the user.
func (c *conn) getPrompt(ctx context.Context, name string, args map[string]string) (string, error) {
	var res getPromptResult
	err := c.do(ctx, fmt.Sprintf("the prompt %q", name), func(cs *session) error {
		return cs.call(ctx, "prompts/get", getPromptParams{Name: name, Arguments: args}, &res)
	})
	if err != nil {
		return "", err
	}
	return flattenPrompt(&res), nil
}

// readResource reads one resource. Its error is ctx's or a sentence.
func (c *conn) readResource(ctx context.Context, uri string) (*readResourceResult, error) {
	var res readResourceResult
	err := c.do(ctx, fmt.Sprintf("reading %s", uri), func(cs *session) error {
		return cs.call(ctx, "resources/read", readResourceParams{URI: uri}, &res)
	})
	return &res, err
}

// do runs one request on the live session. The server's own error answer
// is reported as such; a transport failure drops an HTTP or SSE session
// (the next request reconnects) and is repeated at once, on a new session,
// only when the request surely never reached the server. Its error is
// ctx's, or a sentence naming the server and what (e.g. `the call to
// "echo"`).
func (c *conn) do(ctx context.Context, what string, request func(*session) error) error {
	for retried := false; ; retried = true {
		l, fresh, err := c.session(ctx)
		if err != nil {
			return err
		}
		cs := l.cs
		err = request(cs)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var werr *rpcError
		if errors.As(err, &werr) {
			return userErr(fmt.Sprintf("MCP server %q refused %s: %s", c.srv.Name, what, oneLine(werr.Message)), err)
		}
		if c.srv.kind() == TypeStdio {
			return c.stdioLost(l, what, err)
		}
		c.drop(cs, err)
		// A request the transport could not send may never have left
		// corvid; a missing session means the server forgot us (it
		// restarted) and did not run it.
		var serr *sendError
		if (errors.As(err, &serr) || errors.Is(err, errSessionMissing)) && !fresh && !retried {
			continue
		}
		return userErr(fmt.Sprintf("lost the connection to MCP server %q during %s (%s); corvid reconnects on the next call", c.srv.Name, what, describe(err)), err)
	}
}

// drop closes an HTTP or SSE session after a transport failure; the next
// call reconnects.
func (c *conn) drop(cs *session, why error) {
	c.lose(cs, why)
	if !c.m.goBackground(func() { cs.Close() }) {
		go cs.Close()
	}
}

// stdioLost handles a transport failure of a stdio session: usually the
// process died. It waits a moment for the process to end, so the message
// can say how it ended, and whether corvid restarts it.
func (c *conn) stdioLost(l live, what string, why error) error {
	exit := ""
	if l.proc != nil {
		exit = l.proc.waitExit(time.Second)
	}
	if exit == "" {
		// The process lives but its connection is broken: end it.
		c.lose(l.cs, why)
		if !c.m.goBackground(func() { l.cs.Close() }) {
			go l.cs.Close()
		}
		if l.proc != nil {
			l.proc.signalGroup(syscall.SIGKILL)
		}
	} else {
		// Let the session's watcher record the end before the answer.
		done := make(chan struct{})
		go func() { l.cs.Wait(); close(done) }()
		waitFor(done, time.Second)
		c.lose(l.cs, why)
	}
	msg := fmt.Sprintf("MCP server %q stopped during %s", c.srv.Name, what)
	if exit != "" {
		msg += " (" + exit + ")"
	}
	c.mu.Lock()
	restarting := c.restarting
	c.mu.Unlock()
	if restarting {
		return userErr(msg+"; corvid is restarting it, so its tools come back shortly", why)
	}
	return userErr(msg+"; its tools are unavailable until corvid restarts it with the next session", why)
}
