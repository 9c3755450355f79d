package serve

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// transport says how a connection reaches its client; routing depends on it.
type transport int

const (
	overHTTP transport = iota // Streamable HTTP: a connection stream and session streams (SSE)
	overWS                    // WebSocket: every message in one stream of text frames
	overUnix                  // unix socket: NDJSON, exactly as on stdio
)

func (t transport) String() string {
	return [...]string{"http", "websocket", "unix"}[t]
}

// errClosed is what a receiver gets once its connection closed.
var errClosed = errors.New("connection closed")

// conn is one ACP connection: a protocol handler (acpserver over an
// in-memory pipe, or straight over a unix socket) and the outbound queues
// that carry what it writes to the client. The handler writes into the
// conn (Write) and never waits for the client: a message is queued on its
// stream, and a receiver (an SSE response, a socket pump) takes it at the
// client's pace. Too many bytes queued, or a receiver that takes nothing
// for too long, closes the connection; the handler then sees its input end,
// which in serve detaches it from its sessions without cancelling them.
type conn struct {
	id   string
	kind transport
	srv  *Server
	log  *slog.Logger

	ctx    context.Context // done once the connection is closed
	cancel context.CancelFunc

	inMu   sync.Mutex
	in     *io.PipeWriter // HTTP and WebSocket: messages to the handler
	inRead *io.PipeReader
	// closeTransport ends the client side (a socket) when the conn closes;
	// closeInput only its input (a unix socket's read side).
	closeTransport func()
	closeInput     func()

	mu       sync.Mutex
	main     *mailbox            // HTTP: the connection stream; otherwise all output
	sessions map[string]*mailbox // HTTP session streams, by session id
	// pending maps a client request's id key to the session whose stream
	// carries its response ("" = the connection stream).
	pending map[string]string
	// clientRoutes maps an agent→client request's id key to its session
	// ("" = none), to check the Acp-Session-Id of the client's response.
	clientRoutes map[string]string
	buffered     int64
	// active is when the client last posted or let go of a stream
	// (HTTP): with no stream held, IdleTimeout counts from it.
	active time.Time
	// initial receives the handler's first message (HTTP: the answer to
	// initialize, which the POST returns as its body).
	initial  chan []byte
	initDone bool
	closed   bool
	ending   bool   // the handler returned: the pump drains, then closes
	partial  []byte // outbound bytes after the last newline
}

func newConnID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *Server) newConn(kind transport) *conn {
	ctx, cancel := context.WithCancel(s.ctx)
	c := &conn{
		id: newConnID(), kind: kind, srv: s, ctx: ctx, cancel: cancel,
		main: newMailbox(), sessions: map[string]*mailbox{},
		pending: map[string]string{}, clientRoutes: map[string]string{},
		initial: make(chan []byte, 1), initDone: kind != overHTTP,
		active: time.Now(),
	}
	c.log = s.log.With("conn", c.id, "transport", kind.String())
	if kind != overUnix {
		c.inRead, c.in = io.Pipe()
	}
	return c
}

// start runs the protocol handler on r (Server.sweep watches its
// output for stalls). The
// connection closes when the handler returns: after its input ended (a
// unix client that half-closed still gets the answers to what it sent, as
// on stdio) or the conn closed it.
func (c *conn) start(r io.Reader) {
	c.srv.wg.Add(1)
	go func() {
		defer c.srv.wg.Done()
		c.log.Info("connection opened")
		err := c.srv.opts.Handler(c.srv.ctx, r, c)
		if err != nil && !errors.Is(err, context.Canceled) {
			c.log.Debug("protocol handler ended", "err", err)
		}
		c.end("protocol handler ended")
	}()
}

// drainTimeout bounds how long a unix connection whose handler returned
// waits for its client to take the last answers.
const drainTimeout = 5 * time.Second

// end follows the handler's return. A client still gets the answers the
// handler wrote before it returned: a unix client that only half-closed (a
// piped handshake), or any client of a daemon that is stopping
// (endInput). The pump writes what is queued, then closes; at the latest
// after drainTimeout. Over HTTP and WebSocket the handler returns
// otherwise only once the conn closed its input.
func (c *conn) end(why string) {
	c.mu.Lock()
	c.ending = true
	c.main.signal()
	c.mu.Unlock()
	time.AfterFunc(drainTimeout, func() { c.close(why) })
}

// close ends the connection once: its streams stop, its input ends (so
// the handler detaches), and it leaves the registry.
func (c *conn) close(why string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.main.signal()
	for _, m := range c.sessions {
		m.signal()
	}
	c.mu.Unlock()
	c.cancel()
	if c.in != nil {
		_ = c.in.Close()
	}
	if c.closeTransport != nil {
		c.closeTransport()
	}
	c.srv.forget(c)
	c.log.Info("connection closed", "why", why)
}

// endInput ends what the handler reads, as a client that closes its
// side would: it answers what it was sent, then returns (end). The
// daemon's stop does this before it closes the connections.
func (c *conn) endInput() {
	if c.closeInput != nil {
		c.closeInput()
	}
	if c.in != nil {
		_ = c.in.Close()
	}
}

// settled reports whether the connection is closed, or its handler has
// returned and every answer it wrote was taken.
func (c *conn) settled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return true
	}
	if !c.ending || len(c.main.q) > 0 {
		return false
	}
	for _, m := range c.sessions {
		if len(m.q) > 0 {
			return false
		}
	}
	return true
}

func (c *conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// deliver hands one client message (compact JSON, no newline) to the
// handler, in order.
func (c *conn) deliver(msg []byte) error {
	c.inMu.Lock()
	defer c.inMu.Unlock()
	c.mu.Lock()
	closed := c.closed
	c.active = time.Now()
	c.mu.Unlock()
	if closed {
		return errClosed
	}
	line := make([]byte, 0, len(msg)+1)
	line = append(append(line, msg...), '\n')
	if _, err := c.in.Write(line); err != nil {
		return errClosed
	}
	return nil
}

// Write takes the handler's NDJSON output: each complete line is one
// message, routed to its stream. It never blocks on the client.
func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, io.ErrClosedPipe
	}
	data := p
	if len(c.partial) > 0 {
		data = append(c.partial, p...)
		c.partial = nil
	}
	for {
		i := indexNL(data)
		if i < 0 {
			break
		}
		if i > 0 {
			msg := make([]byte, i)
			copy(msg, data[:i])
			c.routeLocked(msg)
		}
		data = data[i+1:]
	}
	if len(data) > 0 {
		c.partial = append([]byte(nil), data...)
	}
	if lim := c.srv.opts.MaxBufferedBytes; lim > 0 && c.buffered > lim {
		c.mu.Unlock()
		c.close(fmt.Sprintf("client took too little of its output: more than %d bytes queued (--max-buffered-bytes)", lim))
		c.mu.Lock()
	}
	return len(p), nil
}

func indexNL(b []byte) int {
	for i, x := range b {
		if x == '\n' {
			return i
		}
	}
	return -1
}

// envelope is what routing needs of a JSON-RPC message.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

func (e *envelope) isResponse() bool { return e.Method == nil && len(e.ID) > 0 }

// sessionIn is the string sessionId of a params or result object ("": none).
func sessionIn(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '{' {
		return ""
	}
	var v struct {
		SessionID any `json:"sessionId"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	s, _ := v.SessionID.(string)
	return s
}

// idKey is a request id as a map key ("" for an id that cannot route).
func idKey(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch id := v.(type) {
	case string:
		return "s:" + id
	case float64:
		return "n:" + string(raw)
	case nil:
		return "null"
	}
	return ""
}

// routeLocked queues one outbound message on the stream it belongs to.
func (c *conn) routeLocked(msg []byte) {
	if !c.initDone {
		c.initDone = true
		c.initial <- msg
		return
	}
	mb := c.main
	if c.kind == overHTTP {
		var env envelope
		_ = json.Unmarshal(msg, &env)
		key := idKey(env.ID)
		switch {
		case env.isResponse():
			if sid := c.pending[key]; sid != "" {
				mb = c.sessionLocked(sid)
			}
			delete(c.pending, key)
		default:
			sid := sessionIn(env.Params)
			if sid != "" {
				mb = c.sessionLocked(sid)
			}
			if key != "" {
				c.clientRoutes[key] = sid
			}
		}
	}
	c.buffered += int64(len(msg))
	mb.push(msg, time.Now())
}

// pushLocal queues a message the transport itself answers with (a
// WebSocket frame's parse error), behind what is already queued.
func (c *conn) pushLocal(msg []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.buffered += int64(len(msg))
	c.main.push(msg, time.Now())
}

func (c *conn) sessionLocked(id string) *mailbox {
	mb := c.sessions[id]
	if mb == nil {
		mb = newMailbox()
		c.sessions[id] = mb
	}
	return mb
}

// acquire leases a stream to one receiver: sid "" is the connection
// stream. It fails when another receiver holds it or the conn closed.
func (c *conn) acquire(sid string) (*mailbox, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false
	}
	mb := c.main
	if sid != "" {
		mb = c.sessionLocked(sid)
	}
	if mb.leased {
		return nil, false
	}
	mb.leased = true
	mb.since = time.Now()
	return mb, true
}

// release gives a stream back; its unread messages stay queued for the
// next receiver.
func (c *conn) release(sid string, mb *mailbox) {
	c.mu.Lock()
	defer c.mu.Unlock()
	mb.leased = false
	c.active = time.Now()
	if sid != "" && len(mb.q) == 0 && c.sessions[sid] == mb {
		delete(c.sessions, sid)
	}
}

// next waits for the stream's next message. keepAlive, when positive,
// bounds the wait: it returns nil, nil so the caller can send a keep-alive.
func (c *conn) next(ctx context.Context, mb *mailbox, keepAlive time.Duration) ([]byte, error) {
	var tick <-chan time.Time
	if keepAlive > 0 {
		t := time.NewTimer(keepAlive)
		defer t.Stop()
		tick = t.C
	}
	for {
		c.mu.Lock()
		if msg, ok := mb.pop(time.Now()); ok {
			c.buffered -= int64(len(msg))
			c.mu.Unlock()
			return msg, nil
		}
		closed := c.closed || c.ending
		c.mu.Unlock()
		if closed {
			return nil, errClosed
		}
		select {
		case <-mb.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.ctx.Done():
		case <-tick:
			return nil, nil
		}
	}
}

// sweep closes, every period until ctx ends, each connection whose
// receiver holds a stream with messages and takes none of them for
// MaxOutputStall, or whose HTTP client went away without DELETE
// (IdleTimeout). One sweeper serves every connection: an idle one costs no
// goroutine or timer of its own.
func (s *Server) sweep(ctx context.Context) {
	limit, idle := s.opts.MaxOutputStall, s.opts.IdleTimeout
	period := min(max(min(limit, idle)/4, 10*time.Millisecond), time.Second)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, c := range s.all() {
				c.check(now, limit, idle)
			}
		}
	}
}

// check closes the connection if it stalled or sat idle past the limits.
func (c *conn) check(now time.Time, limit, idle time.Duration) {
	if c.stalled(now, limit) {
		c.close(fmt.Sprintf("client read none of its output for %s (--max-output-stall)", limit))
	} else if c.idle(now, idle) {
		c.close(fmt.Sprintf("client neither posted nor listened for %s (--http-idle-timeout)", idle))
	}
}

// idle reports whether an HTTP client holds no stream and has posted
// nothing for limit.
func (c *conn) idle(now time.Time, limit time.Duration) bool {
	if c.kind != overHTTP {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.main.leased {
		return false
	}
	for _, m := range c.sessions {
		if m.leased {
			return false
		}
	}
	return now.Sub(c.active) > limit
}

func (c *conn) stalled(now time.Time, limit time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.main.stalled(now, limit) {
		return true
	}
	for _, m := range c.sessions {
		if m.stalled(now, limit) {
			return true
		}
	}
	return false
}
