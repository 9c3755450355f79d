package mcp

import (
	"context"
	"encoding/json"
)

// What a server sends on its own: conn is the session's clientHandler.

// request answers the server's requests corvid offered in initialize:
// roots/list, sampling/createMessage, elicitation/create; anything else
// is -32601.
func (c *conn) request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "roots/list":
		if c.m.opts.Roots == nil {
			break
		}
		roots := rootsOf(c.m.roots())
		if roots == nil {
			roots = []*root{}
		}
		return listRootsResult{Roots: roots}, nil
	case "sampling/createMessage":
		if c.m.opts.Sample == nil {
			break
		}
		var p createMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &rpcError{Code: codeInvalidParams, Message: err.Error()}
		}
		return c.sample(ctx, &p)
	case "elicitation/create":
		if elicitCaps(c.m.opts.Ask) == nil {
			break
		}
		var p elicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &rpcError{Code: codeInvalidParams, Message: err.Error()}
		}
		return c.elicit(ctx, &p)
	}
	return nil, errMethodNotFound
}

// notify handles the server's notifications: a changed list is read
// again, progress goes to its call, a finished url elicitation to the
// editor.
func (c *conn) notify(method string, params json.RawMessage) {
	switch method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		c.scheduleRefresh()
	case "notifications/progress":
		var p progressParams
		if err := json.Unmarshal(params, &p); err == nil {
			c.onProgress(&p)
		}
	case "notifications/elicitation/complete":
		var p elicitationCompleteParams
		if json.Unmarshal(params, &p) == nil && elicitCaps(c.m.opts.Ask) != nil {
			c.elicitationComplete(&p)
		}
	default:
		c.m.log.Debug("mcp server notification ignored", "server", c.srv.Name, "method", method)
	}
}
