package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// DefaultMaxLineBytes bounds one inbound frame. Prompts carry base64 images
// and embedded files, so this is far above bufio.Scanner's 64 KiB default.
const DefaultMaxLineBytes = 64 << 20

// Handler answers the peer's requests and notifications.
//
// HandleRequest is called in arrival order, one at a time, so a request's
// effects are visible to the messages after it. A handler that takes long
// (a prompt turn) does its ordering-sensitive part and returns Deferred: the
// rest then runs concurrently and its result is the answer. The returned
// error is mapped at the boundary: an *Error (possibly wrapped) is sent as
// is; a context error after $/cancel_request is -32800; anything else is
// -32603 with the text logged, never sent.
type Handler interface {
	HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error)
	HandleNotification(ctx context.Context, method string, params json.RawMessage)
}

// Deferred is returned by a handler to finish a request concurrently.
type Deferred func() (any, error)

// Options configure a Conn.
type Options struct {
	MaxLineBytes int          // default DefaultMaxLineBytes
	Logger       *slog.Logger // default slog.Default()
	// BeforeWrite, if set, runs before each write of queued frames: the
	// agent makes what they report durable first (kill -9 then loses
	// nothing the client saw). If it fails, the batch's notifications are
	// dropped (they may report what was not stored); responses still go.
	BeforeWrite func() error
}

// ErrClosed is returned when the connection is gone.
var ErrClosed = errors.New("acp: connection closed")

// Conn is one JSON-RPC 2.0 peer over newline-delimited JSON. One reader
// routes responses to waiting callers by id and queues requests and
// notifications for the ordered dispatcher; one writer emits compact frames.
type Conn struct {
	r    io.Reader
	w    io.Writer
	h    Handler
	opts Options
	log  *slog.Logger

	out        chan outFrame
	writerDone chan struct{}
	gone       chan struct{} // closed when the peer's stdin reached EOF or stdout broke
	goneOnce   sync.Once

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[string]chan *wireMessage // our calls awaiting a response, by id
	active  map[string]*wireMessage      // peer requests in flight, by id

	queueMu   sync.Mutex
	queueCond *sync.Cond
	queue     []*wireMessage
	queueDone bool
	// notesQueued and notesDone count the peer's notifications queued and
	// handled (in order), so a response can wait for those before it.
	notesQueued, notesDone int64

	handlers sync.WaitGroup
}

// NewConn returns a connection reading r and writing w. Call Serve to run it.
func NewConn(r io.Reader, w io.Writer, h Handler, opts Options) *Conn {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := &Conn{
		r: r, w: w, h: h, opts: opts, log: opts.Logger,
		out:        make(chan outFrame, 4096),
		writerDone: make(chan struct{}),
		gone:       make(chan struct{}),
		pending:    map[string]chan *wireMessage{},
		active:     map[string]*wireMessage{},
	}
	c.queueCond = sync.NewCond(&c.queueMu)
	return c
}

// Gone is closed when the peer disappeared: its input ended or our output
// broke. Long-running work should stop then.
func (c *Conn) Gone() <-chan struct{} { return c.gone }

func (c *Conn) markGone() { c.goneOnce.Do(func() { close(c.gone) }) }

// wireMessage is any inbound or outbound JSON-RPC message.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`

	hasID   bool
	started bool            // its handler was called (guarded by Conn.mu)
	ctx     context.Context // for inbound requests: cancelled by $/cancel_request or shutdown
	cancel  context.CancelCauseFunc
}

var errCancelRequested = errors.New("request cancelled by $/cancel_request")

// Serve runs the connection until the input ends, ctx is cancelled or the
// output breaks. On the way out it cancels the handlers already running,
// still answers what was queued (with live contexts), waits up to grace for
// handlers to answer, flushes the output and returns. It returns nil
// on a clean EOF, ctx's error if ctx ended first and ErrClosed if the output
// broke. In the last two cases the reader may stay blocked on the input until
// it ends; what it reads then is dropped.
func (c *Conn) Serve(ctx context.Context, grace time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c.writeLoop()
	dispatchDone := make(chan struct{})
	go func() { defer close(dispatchDone); c.dispatchLoop(ctx) }()

	// A Read cannot be interrupted, so Serve does not wait for the reader
	// when it has other reasons to stop: a client that stopped reading our
	// output, or an owner that cancelled ctx, may keep the input open.
	readDone := make(chan error, 1)
	go func() { readDone <- c.readLoop(ctx) }()
	var readErr error
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
		readErr = ctx.Err()
	case <-c.gone: // only the writer closes it before this point
		readErr = ErrClosed
	}
	c.markGone()

	// The peer is gone: cancel the handlers already running, but still
	// answer what it sent before closing its input (a piped handshake ends
	// with EOF) with live contexts, so queued quick requests (initialize,
	// session/new, session/load) still succeed.
	cancel()
	c.mu.Lock()
	for _, m := range c.active {
		if m.started {
			m.cancel(context.Canceled)
		}
	}
	c.mu.Unlock()
	c.queueMu.Lock()
	c.queueDone = true
	c.queueCond.Broadcast()
	c.queueMu.Unlock()
	c.failPending()

	waited := make(chan struct{})
	go func() { <-dispatchDone; c.handlers.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(grace):
		c.log.Warn("handlers still running at shutdown")
	}
	// Flush and stop the writer.
	select {
	case c.out <- outFrame{}:
		<-c.writerDone
	case <-c.writerDone:
	}
	if readErr == io.EOF {
		return nil
	}
	return readErr
}

func (c *Conn) readLoop(ctx context.Context) error {
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		line, tooLong, err := c.readLine(br)
		if ctx.Err() != nil {
			return ctx.Err() // Serve has returned; nobody would answer
		}
		if tooLong > 0 {
			c.sendError(nil, NewError(CodeInvalidRequest, "Request too large",
				fmt.Sprintf("a line of at least %d bytes exceeds the %d-byte frame limit", tooLong, c.opts.MaxLineBytes)))
		} else if len(line) > 0 {
			c.handleFrames(ctx, line)
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// readLine returns the next line without its terminator. A line whose
// content (without "\n" or "\r\n") is over the limit is discarded up to its
// newline and reported as tooLong (its size so far).
func (c *Conn) readLine(br *bufio.Reader) (line []byte, tooLong int, err error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		// Stop buffering once the line cannot fit even with a "\r\n" terminator.
		if tooLong == 0 && len(buf)+len(frag) > c.opts.MaxLineBytes+2 {
			tooLong = len(buf) + len(frag)
			buf = nil
		}
		if tooLong > 0 {
			if err == nil {
				return nil, tooLong, nil
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			return nil, tooLong, err
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf, frag...)
			continue
		}
		buf = append(buf, frag...) // copies: frag is only valid until the next read
		content := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
		if len(content) > c.opts.MaxLineBytes {
			return nil, len(content), err
		}
		return bytes.TrimSpace(buf), 0, err
	}
}

// handleFrames handles one line. A line that is not JSON but holds bare
// CRs is several frames from a peer that ends lines with "\r" alone: each
// part is handled on its own rather than lost together. (A CR may also be
// JSON whitespace, so a line that parses whole stays one frame.)
func (c *Conn) handleFrames(ctx context.Context, line []byte) {
	if bytes.IndexByte(line, '\r') < 0 || json.Valid(line) {
		c.handleLine(ctx, line)
		return
	}
	for part := range bytes.SplitSeq(line, []byte("\r")) {
		if part = bytes.TrimSpace(part); len(part) > 0 {
			c.handleLine(ctx, part)
		}
	}
}

func (c *Conn) handleLine(ctx context.Context, line []byte) {
	msg, rpcErr := decodeMessage(line)
	if rpcErr != nil {
		var id json.RawMessage
		if msg != nil && msg.hasID {
			id = msg.ID
		}
		c.sendError(id, rpcErr)
		return
	}
	if msg.Method == "$/cancel_request" {
		c.cancelActive(msg.Params)
		if !msg.hasID {
			return
		}
		// Sent as a request, against the spec: it still needs an answer,
		// so the handler gets it like any other request.
	}
	switch {
	case msg.Method == "" && msg.hasID:
		c.routeResponseInOrder(msg)
	default:
		if msg.hasID {
			// Register now so a $/cancel_request right behind it finds it.
			reqCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
			msg.ctx, msg.cancel = reqCtx, cancel
			c.mu.Lock()
			c.active[string(msg.ID)] = msg
			c.mu.Unlock()
		}
		c.queueMu.Lock()
		c.queue = append(c.queue, msg)
		if !msg.hasID {
			c.notesQueued++
		}
		c.queueCond.Broadcast()
		c.queueMu.Unlock()
	}
}

// decodeMessage parses one frame and classifies JSON-RPC envelope errors.
func decodeMessage(line []byte) (*wireMessage, *Error) {
	if !json.Valid(line) {
		return nil, NewError(CodeParseError, "Parse error", "the line is not valid JSON")
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		detail := "expected a JSON object"
		if trimmed[0] == '[' {
			detail = "batch arrays are not supported in ACP v1; send one JSON object per line"
		}
		return nil, NewError(CodeInvalidRequest, "Invalid request", detail)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, NewError(CodeParseError, "Parse error", err.Error())
	}
	msg := &wireMessage{}
	if id, ok := fields["id"]; ok {
		if !validID(id) {
			return nil, NewError(CodeInvalidRequest, "Invalid request", "id must be a string, a whole number within int64, or null")
		}
		msg.ID, msg.hasID = echoableID(id), true
	}
	var version string
	if v, ok := fields["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return msg, NewError(CodeInvalidRequest, "Invalid request", `"jsonrpc" must be "2.0"`)
	}
	if m, ok := fields["method"]; ok {
		if json.Unmarshal(m, &msg.Method) != nil || msg.Method == "" {
			return msg, NewError(CodeInvalidRequest, "Invalid request", `"method" must be a non-empty string`)
		}
		if p, ok := fields["params"]; ok && !bytes.Equal(bytes.TrimSpace(p), []byte("null")) {
			msg.Params = p
		}
		return msg, nil
	}
	if !msg.hasID {
		return msg, NewError(CodeInvalidRequest, "Invalid request", `a message needs "method" (request or notification) or "id" (response)`)
	}
	res, hasRes := fields["result"]
	errField, hasErr := fields["error"]
	if hasRes == hasErr {
		return nil, NewError(CodeInvalidRequest, "Invalid request", `a response has exactly one of "result" and "error"`)
	}
	msg.Result = res
	if hasErr {
		msg.Error = &Error{}
		if json.Unmarshal(errField, msg.Error) != nil {
			msg.Error = &Error{Code: CodeInternalError, Message: "malformed error object from peer"}
		}
	}
	return msg, nil
}

func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case 'n':
		return string(id) == "null"
	default:
		// The schema's RequestId is an int64 "integer", which in its JSON
		// Schema 2020-12 includes 1.0 and 1e2: any number whose value is a
		// whole int64 is valid, and it is echoed byte for byte.
		if id[0] != '-' && (id[0] < '0' || id[0] > '9') || !json.Valid(id) {
			return false
		}
		r, ok := new(big.Rat).SetString(string(id))
		return ok && r.IsInt() && r.Num().IsInt64()
	}
}

// echoableID returns a valid id as it is echoed. Ids are echoed byte for
// byte, except a string id that is not valid UTF-8: frames must be UTF-8, so
// it is re-encoded with U+FFFD for the bad bytes (as its decoded value has).
func echoableID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 || id[0] != '"' || utf8.Valid(id) {
		return id
	}
	var s string
	if json.Unmarshal(id, &s) != nil {
		return id
	}
	b, err := json.Marshal(s)
	if err != nil {
		return id
	}
	return b
}

func (c *Conn) dispatchLoop(ctx context.Context) {
	for {
		c.queueMu.Lock()
		for len(c.queue) == 0 && !c.queueDone {
			c.queueCond.Wait()
		}
		if len(c.queue) == 0 {
			c.queueMu.Unlock()
			return
		}
		msg := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.queueMu.Unlock()

		if msg.hasID {
			c.runRequest(msg)
		} else {
			c.runNotification(ctx, msg)
			c.queueMu.Lock()
			c.notesDone++
			c.queueCond.Broadcast()
			c.queueMu.Unlock()
		}
	}
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

func (c *Conn) runRequest(msg *wireMessage) {
	c.handlers.Add(1)
	c.mu.Lock()
	msg.started = true
	c.mu.Unlock()
	result, deferred, err := c.callHandler(msg, func() (any, error) {
		return c.h.HandleRequest(msg.ctx, msg.Method, msg.Params)
	})
	if deferred != nil {
		go func() {
			result, _, err := c.callHandler(msg, deferred)
			c.finishRequest(msg, result, err)
		}()
		return
	}
	c.finishRequest(msg, result, err)
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
		target.cancel(errCancelRequested)
	}
}

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
	b    []byte
	keep func() bool
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

func (c *Conn) sendError(id json.RawMessage, e *Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	_ = c.send(&wireMessage{JSONRPC: "2.0", ID: id, hasID: true, Error: e}, nil)
}

// send encodes env with payload as params (requests, notifications) or
// result (responses) and queues the frame. Frames leave in queue order.
func (c *Conn) send(env *wireMessage, payload any) error {
	return c.enqueue(env, payload, nil)
}

func (c *Conn) enqueue(env *wireMessage, payload any, keep func() bool) error {
	b, err := encodeFrame(env, payload)
	if err != nil {
		c.log.Error("encode frame", "method", env.Method, "err", err)
		if env.Method == "" && env.Error == nil {
			b, _ = encodeFrame(&wireMessage{JSONRPC: "2.0", ID: env.ID, hasID: true,
				Error: &Error{Code: CodeInternalError, Message: "Internal error"}}, nil)
		} else {
			return err
		}
	}
	select {
	case c.out <- outFrame{b: b, keep: keep}:
		return nil
	case <-c.writerDone:
		return ErrClosed
	}
}

func encodeFrame(env *wireMessage, payload any) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(256)
	buf.WriteString(`{"jsonrpc":"2.0"`)
	if env.hasID {
		buf.WriteString(`,"id":`)
		buf.Write(env.ID)
	}
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if env.Method != "" {
		buf.WriteString(`,"method":`)
		if err := enc.Encode(env.Method); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1)
		if payload != nil {
			buf.WriteString(`,"params":`)
			if err := enc.Encode(payload); err != nil {
				return nil, err
			}
			buf.Truncate(buf.Len() - 1)
		}
	} else if env.Error != nil {
		buf.WriteString(`,"error":`)
		if err := enc.Encode(env.Error); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1)
	} else {
		buf.WriteString(`,"result":`)
		if err := enc.Encode(payload); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1)
	}
	buf.WriteString("}\n")
	frame := buf.Bytes()
	if !utf8.Valid(frame) {
		// The encoder fixes strings, but a json.RawMessage payload is copied
		// as is. Invalid bytes can only sit inside strings, so replacing them
		// keeps the JSON valid, and frames must be UTF-8.
		frame = bytes.ToValidUTF8(frame, []byte("\uFFFD"))
	}
	return frame, nil
}

func (c *Conn) writeLoop() {
	defer close(c.writerDone)
	var batch bytes.Buffer
	var frames []outFrame // the frames of batch, for dropping notifications
	broken := false
	stop := false
	for !stop {
		f, ok := <-c.out
		if !ok || f.b == nil {
			break
		}
		batch.Reset()
		batch.Write(f.b)
		frames = append(frames[:0], f)
		// Take whatever else is queued, so one barrier and one write serve
		// many frames.
	drain:
		for batch.Len() < maxBatchBytes {
			select {
			case more := <-c.out:
				if more.b == nil {
					stop = true
					break drain
				}
				batch.Write(more.b)
				frames = append(frames, more)
			default:
				break drain
			}
		}
		if broken {
			continue
		}
		if c.opts.BeforeWrite != nil {
			if err := c.opts.BeforeWrite(); err != nil {
				rebuild(&batch, frames, func(outFrame) bool { return false })
				c.log.Warn("notifications not sent: what they report could not be stored", "err", err)
			} else if hasKeep(frames) {
				rebuild(&batch, frames, func(f outFrame) bool { return f.keep == nil || f.keep() })
			}
		}
		if batch.Len() == 0 {
			continue
		}
		if _, err := c.w.Write(batch.Bytes()); err != nil {
			broken = true
			c.log.Warn("output broken; the client is gone", "err", err)
			c.markGone()
		}
	}
}

func hasKeep(frames []outFrame) bool {
	for _, f := range frames {
		if f.keep != nil {
			return true
		}
	}
	return false
}

// rebuild rewrites batch with the frames that are not notifications
// (responses and requests carry an id) and the notifications keepNote keeps.
func rebuild(batch *bytes.Buffer, frames []outFrame, keepNote func(outFrame) bool) {
	batch.Reset()
	for _, f := range frames {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(f.b, &m) == nil && len(m.ID) == 0 && !keepNote(f) {
			continue
		}
		batch.Write(f.b)
	}
}

// maxBatchBytes bounds how much output one write carries.
const maxBatchBytes = 1 << 20
