package mcp

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTool calls a tool. Its error is ctx's, or a sentence for the model.
func (c *conn) callTool(ctx context.Context, name string, args map[string]any) (*sdk.CallToolResult, error) {
	var res *sdk.CallToolResult
	err := c.do(ctx, fmt.Sprintf("the call to %q", name), func(cs *sdk.ClientSession) (err error) {
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		return err
	})
	return res, err
}

// getPrompt expands a prompt. Its error is ctx's or a sentence for the user.
func (c *conn) getPrompt(ctx context.Context, name string, args map[string]string) (string, error) {
	var res *sdk.GetPromptResult
	err := c.do(ctx, fmt.Sprintf("the prompt %q", name), func(cs *sdk.ClientSession) (err error) {
		res, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	if err != nil {
		return "", err
	}
	return flattenPrompt(res), nil
}

// do runs one request on the live session. The server's own error answer
// is reported as such; a transport failure drops an HTTP or SSE session
// (the next request reconnects) and is repeated at once, on a new session,
// only when the request surely never reached the server. Its error is
// ctx's, or a sentence naming the server and what (e.g. `the call to
// "echo"`).
func (c *conn) do(ctx context.Context, what string, request func(*sdk.ClientSession) error) error {
	for retried := false; ; retried = true {
		cs, fresh, err := c.session(ctx)
		if err != nil {
			return err
		}
		err = request(cs)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rejected := isRejected(err)
		var werr *jsonrpc.Error
		if !rejected && errors.As(err, &werr) {
			return &userError{fmt.Sprintf("MCP server %q refused %s: %s", c.srv.Name, what, oneLine(werr.Message)), err}
		}
		if c.srv.kind() == TypeStdio {
			return c.stdioLost(cs, what, err)
		}
		c.drop(cs, err)
		// A rejected request never left corvid; a missing session means
		// the server forgot us (it restarted) and did not run it.
		if (rejected || errors.Is(err, sdk.ErrSessionMissing)) && !fresh && !retried {
			continue
		}
		return &userError{fmt.Sprintf("lost the connection to MCP server %q during %s (%s); corvid reconnects on the next call", c.srv.Name, what, describe(err)), err}
	}
}

// codeRejected is the go-sdk's code for a request its transport could not
// deliver (it never reached the server).
const codeRejected = -32005

func isRejected(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == codeRejected && werr.Message == "rejected by transport"
}

// drop closes an HTTP or SSE session after a transport failure; the next
// call reconnects.
func (c *conn) drop(cs *sdk.ClientSession, why error) {
	c.lose(cs, why)
	if !c.m.goBackground(func() { cs.Close() }) {
		go cs.Close()
	}
}

// stdioLost handles a transport failure of a stdio session: usually the
// process died. It waits a moment for the go-sdk to notice and reap it, so
// the message can say how it ended.
func (c *conn) stdioLost(cs *sdk.ClientSession, what string, why error) error {
	done := make(chan struct{})
	go func() { cs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		// The process lives but its connection is broken: end it.
		c.lose(cs, why)
		if !c.m.goBackground(func() { cs.Close() }) {
			go cs.Close()
		}
		c.proc.signalGroup(syscall.SIGKILL)
	}
	msg := fmt.Sprintf("MCP server %q stopped during %s", c.srv.Name, what)
	if exit := c.proc.exitTextAfter(done); exit != "" {
		msg += " (" + exit + ")"
	}
	return &userError{msg + "; its tools are unavailable until corvid restarts it with the next session", why}
}
