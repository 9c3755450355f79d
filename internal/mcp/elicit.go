package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Elicitation --------------------------------------------------------------
//
// A server's elicitation/create goes to the user through Options.Ask (the
// ACP client's elicitation), scoped to the tool call of this server that is
// running, if any; its answer goes back to the server. corvid advertises
// exactly the modes the asker shows, and nothing when it shows none.

// elicitCaps are the elicitation modes to advertise to servers (nil: none).
func elicitCaps(ask tool.Asker) *sdk.ElicitationCapabilities {
	if ask == nil {
		return nil
	}
	form, url := ask.ElicitModes()
	if !form && !url {
		return nil
	}
	caps := &sdk.ElicitationCapabilities{}
	if form {
		caps.Form = &sdk.FormElicitationCapabilities{}
	}
	if url {
		caps.URL = &sdk.URLElicitationCapabilities{}
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

func (c *conn) elicit(ctx context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p := r.Params
	if p == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no parameters"}
	}
	e := tool.Elicitation{Mode: p.Mode, Message: p.Message}
	if e.Mode == "" {
		e.Mode = "form"
	}
	switch e.Mode {
	case "form":
		schema, err := json.Marshal(p.RequestedSchema)
		if err != nil || p.RequestedSchema == nil {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		e.Schema = schema
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
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the client does not support %s elicitation", e.Mode)}
	case errors.Is(err, tool.ErrNoAnswer):
		return &sdk.ElicitResult{Action: "cancel"}, nil
	case err != nil:
		return nil, err
	}
	out := &sdk.ElicitResult{Action: res.Action}
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
func (c *conn) elicitationComplete(r *sdk.ElicitationCompleteNotificationRequest) {
	if r.Params != nil && r.Params.ElicitationID != "" {
		c.m.opts.Ask.CompleteElicitation(c.acpElicitationID(r.Params.ElicitationID))
	}
}
