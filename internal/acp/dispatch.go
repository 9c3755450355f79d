package acp

import (
	"context"
	"encoding/json"
	"errors"
	"runtime/debug"
)

// dispatchLoop handles queued messages in order until the queue is done;
// then it closes done. A request whose handler defers its rest (a prompt)
// has that rest run on this goroutine, at once, while the loop goes on in
// a new one: the request does not wait for a goroutine to be scheduled.
func (c *Conn) dispatchLoop(ctx context.Context, done chan struct{}) {
	for {
		c.queueMu.Lock()
		c.dispatching = false
		for len(c.queue) == 0 && !c.queueDone {
			c.queueCond.Wait()
		}
		if len(c.queue) == 0 {
			c.queueMu.Unlock()
			close(done)
			return
		}
		msg := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.dispatching = true
		c.queueMu.Unlock()

		if msg.hasID {
			if deferred := c.runRequest(msg); deferred != nil {
				c.queueMu.Lock()
				c.dispatching = false // the rest runs out of order
				c.queueMu.Unlock()
				go c.dispatchLoop(ctx, done)
				result, _, err := c.callHandler(msg, deferred)
				c.finishRequest(msg, result, err)
				return
			}
		} else {
			c.runNotification(ctx, msg)
			c.giveBack(msg)
			c.queueMu.Lock()
			c.notesDone++
			c.queueCond.Broadcast()
			c.queueMu.Unlock()
		}
	}
}

// notifyOnReader handles a notification on the reading goroutine when
// the connection allows it (Options.NotifyOnReader) and nothing queued or
// running comes before it; it reports whether it did. Otherwise the
// dispatcher takes it, in order.
func (c *Conn) notifyOnReader(ctx context.Context, msg *wireMessage) bool {
	if !c.opts.NotifyOnReader {
		return false
	}
	c.queueMu.Lock()
	idle := len(c.queue) == 0 && !c.dispatching && !c.queueDone
	c.queueMu.Unlock()
	if !idle {
		return false
	}
	// Only this goroutine queues: the dispatcher stays idle meanwhile,
	// and a response read next finds this notification handled.
	c.runNotification(ctx, msg)
	c.giveBack(msg)
	return true
}

// routeResponseInOrder delivers a response to our call only after every
// notification the peer sent before it has been handled. A client cancels a
// turn with session/cancel and then answers the open permission request
// "cancelled"; the turn must see the cancel first, or it carries on as if
// the user had merely rejected one tool. (Handlers that run in order must
// therefore never wait on a call to the peer; deferred ones may.)
func (c *Conn) routeResponseInOrder(msg *wireMessage) {
	c.queueMu.Lock()
	want := c.notesQueued
	ready := c.notesDone >= want
	c.queueMu.Unlock()
	if ready {
		c.routeResponse(msg)
		return
	}
	go func() {
		c.queueMu.Lock()
		for c.notesDone < want && !c.queueDone {
			c.queueCond.Wait()
		}
		c.queueMu.Unlock()
		c.routeResponse(msg)
	}()
}

func (c *Conn) runNotification(ctx context.Context, msg *wireMessage) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("panic in notification handler", "method", msg.Method, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	c.h.HandleNotification(ctx, msg.Method, msg.Params)
}

// runRequest runs msg's handler and answers it, unless the handler
// deferred the rest of its work: runRequest returns that, for the caller
// to run (and answer) off the dispatch loop.
func (c *Conn) runRequest(msg *wireMessage) Deferred {
	c.handlers.Add(1)
	c.mu.Lock()
	msg.started = true
	c.mu.Unlock()
	result, deferred, err := c.callHandler(msg, func() (any, error) {
		return c.h.HandleRequest(msg.ctx, msg.Method, msg.Params)
	})
	// The handler has decoded what it needs: the line may go while a
	// deferred rest (a prompt's turn) runs.
	msg.Params = nil
	if deferred != nil {
		return deferred
	}
	c.finishRequest(msg, result, err)
	return nil
}

// callHandler runs f with panic recovery. A Deferred result is returned as
// such, to be run by the caller.
func (c *Conn) callHandler(msg *wireMessage, f func() (any, error)) (result any, deferred Deferred, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("panic in request handler", "method", msg.Method, "panic", p, "stack", string(debug.Stack()))
			result, deferred, err = nil, nil, NewError(CodeInternalError, "Internal error", "the agent hit an unexpected fault; see its log")
		}
	}()
	result, err = f()
	if d, ok := result.(Deferred); ok && err == nil {
		return nil, d, nil
	}
	return result, nil, err
}

func (c *Conn) finishRequest(msg *wireMessage, result any, err error) {
	defer c.handlers.Done()
	if msg.big {
		// Before the answer: a client that sees it sees the memory back.
		returnMemory()
	}
	c.mu.Lock()
	// A peer may reuse an id that is still in flight (the spec says not
	// to); the newest request owns it, and the older one must not take
	// its $/cancel_request target away when it finishes.
	if c.active[string(msg.ID)] == msg {
		delete(c.active, string(msg.ID))
	}
	c.mu.Unlock()
	cause := context.Cause(msg.ctx)
	msg.cancel(nil)
	if err != nil {
		c.sendError(msg.ID, c.mapError(msg.Method, err, cause))
		return
	}
	var after func()
	if t, ok := result.(Then); ok {
		result, after = t.Result, t.After
	}
	if result == nil {
		result = struct{}{}
	}
	c.send(&wireMessage{JSONRPC: "2.0", ID: msg.ID, hasID: true}, result)
	if after != nil {
		after()
	}
}

// Then is a result with work to do right after it is written, in order
// (e.g. available_commands_update right after a session/new response).
type Then struct {
	Result any
	After  func()
}

func (c *Conn) mapError(method string, err, cause error) *Error {
	if e, ok := AsError(err); ok {
		return e
	}
	if errors.Is(cause, errCancelRequested) || errors.Is(err, context.Canceled) {
		return &Error{Code: CodeRequestCancelled, Message: "Request cancelled"}
	}
	c.log.Error("request failed", "method", method, "err", err)
	return &Error{Code: CodeInternalError, Message: "Internal error"}
}

func (c *Conn) cancelActive(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	c.mu.Lock()
	target := c.active[string(echoableID(p.RequestID))]
	c.mu.Unlock()
	if target != nil {
		target.cancel(&CancelRequested{Params: append(json.RawMessage(nil), params...)})
	}
}

// bigFrame is the size from which a request's line, and what its handler
// decoded from it, are worth giving back to the OS once it is answered.
const bigFrame = 8 << 20

// returnMemory runs a collection and returns the memory it frees to the
// OS. The Go runtime gives freed memory back only slowly, so after one
// huge request (a prompt of many MiB: its line, its decoded content, its
// stored rows) the process would stay at its peak for minutes (issue 29:
// 1.3 GiB after a 50 MB prompt). It costs one collection, a few ms.
func returnMemory() { debug.FreeOSMemory() }
