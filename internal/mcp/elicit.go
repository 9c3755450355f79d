package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Elicitation --------------------------------------------------------------
//
// A server's elicitation/create goes to the user through Options.Ask (the
// ACP client's elicitation), scoped to the tool call of this server that is
// running, if any; its answer goes back to the server. corvid advertises
// exactly the modes the asker shows, and nothing when it shows none.

// elicitCaps are the elicitation modes to advertise to servers (nil: none).
func elicitCaps(ask tool.Asker) *elicitationCapability {
	if ask == nil {
		return nil
	}
	form, url := ask.ElicitModes()
	if !form && !url {
		return nil
	}
	caps := &elicitationCapability{}
	if form {
		caps.Form = &struct{}{}
	}
	if url {
		caps.URL = &struct{}{}
	}
	return caps
}

// runningCall is a tool call of this server that is in flight.
type runningCall struct {
	id  string
	ctx context.Context
}

// enterCall records that tool call id runs on c until the returned func.
func (c *conn) enterCall(ctx context.Context, id string) func() {
	rc := &runningCall{id: id, ctx: ctx}
	c.callMu.Lock()
	c.calls = append(c.calls, rc)
	c.callMu.Unlock()
	return func() {
		c.callMu.Lock()
		defer c.callMu.Unlock()
		for i, x := range c.calls {
			if x == rc {
				c.calls = append(c.calls[:i], c.calls[i+1:]...)
				break
			}
		}
	}
}

// currentCall is the latest tool call still running on c, or nil.
func (c *conn) currentCall() *runningCall {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	if len(c.calls) == 0 {
		return nil
	}
	return c.calls[len(c.calls)-1]
}

// acpElicitationID keeps url-mode ids unique across a session's servers.
func (c *conn) acpElicitationID(id string) string { return c.srv.Name + "/" + id }

func (c *conn) elicit(ctx context.Context, p *elicitParams) (*elicitResult, error) {
	e := tool.Elicitation{Mode: p.Mode, Message: p.Message}
	if e.Mode == "" {
		e.Mode = "form"
	}
	switch e.Mode {
	case "form":
		e.Schema = p.RequestedSchema
		if !has(p.RequestedSchema) {
			e.Schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
	case "url":
		e.URL, e.ID = p.URL, c.acpElicitationID(p.ElicitationID)
	}
	if rc := c.currentCall(); rc != nil {
		// The question belongs to the call: withdrawn when it is
		// cancelled (session/cancel), shown with it in the editor.
		e.ToolCallID = rc.id
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(rc.ctx, cancel)
		defer stop()
	}
	res, err := c.m.opts.Ask.Elicit(ctx, e)
	switch {
	case errors.Is(err, tool.ErrCannotAsk):
		return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("the client does not support %s elicitation", e.Mode)}
	case errors.Is(err, tool.ErrNoAnswer):
		return &elicitResult{Action: "cancel"}, nil
	case err != nil:
		return nil, err
	}
	out := &elicitResult{Action: res.Action}
	if res.Action == "accept" && len(res.Content) > 0 {
		out.Content = map[string]any{}
		for k, raw := range res.Content {
			var v any
			if json.Unmarshal(raw, &v) == nil {
				out.Content[k] = v
			}
		}
	}
	return out, nil
}

// elicitationComplete passes a server's notifications/elicitation/complete
// on to the client.
func (c *conn) elicitationComplete(p *elicitationCompleteParams) {
	if p.ElicitationID != "" {
		c.m.opts.Ask.CompleteElicitation(c.acpElicitationID(p.ElicitationID))
	}
}
