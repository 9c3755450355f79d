package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
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
	// dropped (they may report what was not stored), except those sent
	// with NotifyIf whose keep says their own event was stored; responses
	// still go.
	BeforeWrite func() error
	// QueueFrames is how many frames may wait for the writer (0:
	// DefaultQueueFrames) and ReadBuffer the input buffer's size in bytes
	// (0: DefaultReadBuffer; a longer line is read in pieces). Both are
	// per connection: a transport that queues output itself and holds
	// many idle connections (corvid serve) keeps them small.
	QueueFrames int
	ReadBuffer  int
	// LendParams says the handler keeps nothing of a notification's
	// params once HandleNotification returns: the connection then reuses
	// the notification's line and message for those that follow (lend.go),
	// sparing two allocations a notification (the terminal UI takes
	// 200,000 a second from a fast agent).
	LendParams bool
	// NotifyOnReader says HandleNotification only queues what it is
	// given and never waits on the peer: a notification that nothing is
	// queued or running before is then handled on the reading goroutine
	// (dispatch.go, notifyOnReader), sparing the dispatcher's wake and
	// the thread switch it often costs, once per frame of a stream.
	NotifyOnReader bool
}

// Defaults of Options.QueueFrames and Options.ReadBuffer: what one stdio
// connection streaming at full speed wants.
const (
	DefaultQueueFrames = 4096
	DefaultReadBuffer  = 64 << 10
)

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
	// queued counts the bytes of the frames in out; past maxQueuedBytes a
	// sender waits for the writer (outroom.go).
	queued  atomic.Int64
	waiting atomic.Int32
	roomMu  sync.Mutex
	room    *sync.Cond
	ended   bool // the writer is gone (guarded by roomMu)
	// runSlots holds a token per Run buffer queued and not yet taken by
	// the writer: a replay waits for the writer (and so for the client)
	// instead of queueing the whole session's frames.
	runSlots chan struct{}
	gone     chan struct{} // closed when the peer's stdin reached EOF or stdout broke
	goneOnce sync.Once
	goneMu   sync.Mutex
	// afterGone run once gone closes (AfterGone), guarded by goneMu.
	afterGone []func()

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[string]chan *wireMessage // our calls awaiting a response, by id
	active  map[string]*wireMessage      // peer requests in flight, by id

	queueMu   sync.Mutex
	queueCond *sync.Cond
	queue     []*wireMessage
	queueDone bool
	// dispatching says the dispatcher holds a message whose in-order
	// handling has not finished (Options.NotifyOnReader).
	dispatching bool
	// notified says the reader handled the line's notification itself
	// (the reader's own).
	notified bool
	// notesQueued and notesDone count the peer's notifications queued and
	// handled (in order), so a response can wait for those before it.
	notesQueued, notesDone int64

	handlers sync.WaitGroup

	// Lent lines and messages (lend.go); lentLine is the line readLine
	// just read into a lent buffer, for handleFrames (the reader's own).
	lines, msgs sync.Pool
	lentLine    *[]byte
}

// NewConn returns a connection reading r and writing w. Call Serve to run it.
func NewConn(r io.Reader, w io.Writer, h Handler, opts Options) *Conn {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.QueueFrames <= 0 {
		opts.QueueFrames = DefaultQueueFrames
	}
	if opts.ReadBuffer <= 0 {
		opts.ReadBuffer = DefaultReadBuffer
	}
	c := &Conn{
		r: r, w: w, h: h, opts: opts, log: opts.Logger,
		out:        make(chan outFrame, opts.QueueFrames),
		writerDone: make(chan struct{}),
		runSlots:   make(chan struct{}, maxRunBufs),
		gone:       make(chan struct{}),
		pending:    map[string]chan *wireMessage{},
		active:     map[string]*wireMessage{},
	}
	c.queueCond = sync.NewCond(&c.queueMu)
	c.room = sync.NewCond(&c.roomMu)
	return c
}

// Gone is closed when the peer disappeared: its input ended or our output
// broke. Long-running work should stop then.
func (c *Conn) Gone() <-chan struct{} { return c.gone }

func (c *Conn) markGone() {
	c.goneOnce.Do(func() {
		c.goneMu.Lock()
		close(c.gone)
		fs := c.afterGone
		c.afterGone = nil
		c.goneMu.Unlock()
		for _, f := range fs {
			go f()
		}
	})
}

// AfterGone runs f in a goroutine of its own once the peer is gone (when
// Gone closes; at once if it has). Unlike a goroutine waiting on Gone, it
// costs nothing while the connection lives: a daemon holds thousands.
func (c *Conn) AfterGone(f func()) {
	c.goneMu.Lock()
	select {
	case <-c.gone:
		c.goneMu.Unlock()
		go f()
		return
	default:
	}
	c.afterGone = append(c.afterGone, f)
	c.goneMu.Unlock()
}

// wireMessage is any inbound or outbound JSON-RPC message.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`

	hasID   bool
	line    *[]byte         // the lent line its values alias (Options.LendParams), or nil
	big     bool            // its line was at least bigFrame bytes
	started bool            // its handler was called (guarded by Conn.mu)
	ctx     context.Context // for inbound requests: cancelled by $/cancel_request or shutdown
	cancel  context.CancelCauseFunc
}

var errCancelRequested = errors.New("request cancelled by $/cancel_request")

// CancelRequested is the cause (context.Cause) of a request's context that
// the peer cancelled with $/cancel_request, with the notification's params
// as sent, so a handler can read their _meta (corvid serve names there the
// client whose answer made a question moot).
type CancelRequested struct{ Params json.RawMessage }

func (e *CancelRequested) Error() string        { return errCancelRequested.Error() }
func (e *CancelRequested) Is(target error) bool { return target == errCancelRequested }

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
	go c.dispatchLoop(ctx, dispatchDone)

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
