package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

func (c *Conn) routeResponse(msg *wireMessage) {
	c.mu.Lock()
	ch := c.pending[string(msg.ID)]
	delete(c.pending, string(msg.ID))
	c.mu.Unlock()
	if ch == nil {
		c.log.Warn("response to an unknown request id", "id", string(msg.ID))
		return
	}
	ch <- msg
}

func (c *Conn) failPending() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.send(&wireMessage{JSONRPC: "2.0", Method: method}, params)
}

// NotifyIf sends a notification unless keep, asked after the BeforeWrite
// that precedes its write, says no: what it reports turned out not to be
// stored, so the client must not see it. A nil keep always sends.
func (c *Conn) NotifyIf(method string, params any, keep func() bool) error {
	return c.enqueue(&wireMessage{JSONRPC: "2.0", Method: method}, params, keep)
}

// outFrame is one encoded frame waiting for the writer. keep, when set,
// decides after BeforeWrite whether a notification still goes out. A zero
// outFrame stops the writer.
type outFrame struct {
	b     []byte
	note  bool // a notification (no id): the only kind a failed store may hold back
	keep  func() bool
	reuse bool // b is a Run's buffer, to give back once written
	// pooled: b is a chunk frame's buffer from frameBufs, to give back
	// once written (framebufs.go).
	pooled bool
}

// Call sends a request and waits for its response, decoding the result into
// result (if non-nil). If ctx ends first, the request is withdrawn with
// $/cancel_request and ctx's error is returned. A peer error is an *Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	id := json.RawMessage(strconv.FormatInt(c.nextID.Add(1)-1, 10))
	ch := make(chan *wireMessage, 1)
	c.mu.Lock()
	c.pending[string(id)] = ch
	c.mu.Unlock()
	select {
	case <-c.gone:
		c.dropPending(id)
		return ErrClosed
	default:
	}
	if err := c.send(&wireMessage{JSONRPC: "2.0", ID: id, hasID: true, Method: method}, params); err != nil {
		c.dropPending(id)
		return err
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return ErrClosed
		}
		if resp.Error != nil {
			return resp.Error
		}
		if result != nil && len(resp.Result) > 0 {
			if err := json.Unmarshal(resp.Result, result); err != nil {
				return fmt.Errorf("decode %s result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.dropPending(id)
		_ = c.Notify("$/cancel_request", map[string]json.RawMessage{"requestId": id})
		return ctx.Err()
	case <-c.gone:
		c.dropPending(id)
		return ErrClosed
	}
}

func (c *Conn) dropPending(id json.RawMessage) {
	c.mu.Lock()
	delete(c.pending, string(id))
	c.mu.Unlock()
}
