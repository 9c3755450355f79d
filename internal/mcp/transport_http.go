package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/corvid-agent/corvid/internal/llm/sse"
)

// The streamable HTTP transport (MCP 2025-03-26 and later): every message
// is POSTed to the one endpoint, which answers with nothing (202), one JSON
// body, or an event stream carrying the response, possibly after requests
// and notifications of the server's own; a GET on the same URL opens an
// optional stream for messages the server starts itself.
type streamableTransport struct {
	url    string
	client *http.Client
	in     *inbox

	// ctx lives until Close. Every request hangs on it, so Close ends the
	// event streams; it keeps the values of the constructor's context but
	// not its deadline, which only bounds connecting.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the goroutines reading event streams

	// An event stream that drops is reopened (with Last-Event-ID when it
	// named event IDs) after the delay its server asked for or retryDelay,
	// doubling per attempt that brings nothing new, at most maxRetries
	// such attempts in a row.
	retryDelay time.Duration
	maxRetries int

	mu        sync.Mutex
	sessionID string // Mcp-Session-Id, from the answer to initialize
	version   string // MCP-Protocol-Version, once negotiated
	listening bool   // the standalone GET stream was started
	missing   bool   // the server answered 404 to our session id
	closed    bool
}

// httpExcerptBytes bounds how much of an error body goes into an error.
const httpExcerptBytes = 300

// deleteTimeout bounds the DELETE that ends a session on Close: a server
// that does not answer must not hold up corvid's shutdown.
const deleteTimeout = 2 * time.Second

func newStreamableTransport(ctx context.Context, o httpOptions) (transport, error) {
	if o.URL == "" {
		return nil, errors.New("no URL for the MCP server")
	}
	client := o.Client
	if client == nil {
		client = http.DefaultClient
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &streamableTransport{
		url:        o.URL,
		client:     client,
		in:         newInbox(),
		ctx:        life,
		cancel:     cancel,
		retryDelay: 500 * time.Millisecond,
		maxRetries: 5,
	}, nil
}

func (t *streamableTransport) setProtocolVersion(v string) {
	t.mu.Lock()
	t.version = v
	t.mu.Unlock()
}

// setHeaders names the session and the protocol version, once known, and
// reports whether a session id went out.
func (t *streamableTransport) setHeaders(h http.Header) (withSession bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sessionID != "" {
		h.Set("Mcp-Session-Id", t.sessionID)
	}
	if t.version != "" {
		h.Set("MCP-Protocol-Version", t.version)
	}
	return t.sessionID != ""
}

// sessionGone records a 404 to our session id: Recv ends with
// errSessionMissing, and Close sends no DELETE.
func (t *streamableTransport) sessionGone() error {
	t.mu.Lock()
	t.missing = true
	t.mu.Unlock()
	t.in.end(errSessionMissing, false)
	return errSessionMissing
}

// start counts a goroutine that reads an event stream, unless the
// transport is closed (Close waits for those it counted).
func (t *streamableTransport) start() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	return true
}

func (t *streamableTransport) Send(ctx context.Context, msg []byte) error {
	env := peek(msg)
	isRequest := env.Method != "" && len(env.ID) > 0

	// The request lives on the transport's context, so that an event
	// stream it opens outlives Send; ctx bounds it only until the answer
	// starts.
	reqCtx, cancelReq := context.WithCancel(t.ctx)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, t.url, bytes.NewReader(msg))
	if err != nil {
		cancelReq()
		return fmt.Errorf("MCP request to %s: %w", t.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	withSession := t.setHeaders(req.Header)
	stop := context.AfterFunc(ctx, cancelReq)
	res, err := t.client.Do(req)
	if !stop() {
		if err == nil {
			res.Body.Close()
		}
		cancelReq()
		return ctx.Err()
	}
	if err != nil {
		cancelReq()
		if t.ctx.Err() != nil {
			return errClosed
		}
		return err
	}
	if id := res.Header.Get("Mcp-Session-Id"); id != "" {
		t.mu.Lock()
		if t.sessionID == "" {
			t.sessionID = id
		}
		t.mu.Unlock()
	}

	err = t.answer(res, env, isRequest, withSession, cancelReq)
	if err == nil && env.Method == "notifications/initialized" {
		t.listen()
	}
	return err
}

// answer delivers what the server answered to one POST. It owns res and
// cancelReq.
func (t *streamableTransport) answer(res *http.Response, env envelope, isRequest, withSession bool, cancelReq context.CancelFunc) error {
	if res.StatusCode == http.StatusNotFound && withSession {
		res.Body.Close()
		cancelReq()
		return t.sessionGone()
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		defer cancelReq()
		return statusError(http.MethodPost, res)
	}
	mediaType, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if mediaType == "text/event-stream" {
		if !t.start() {
			res.Body.Close()
			cancelReq()
			return errClosed
		}
		var want json.RawMessage
		if isRequest {
			want = env.ID
		}
		go t.readPostStream(res.Body, want, cancelReq)
		return nil
	}
	defer cancelReq()
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, sse.MaxEventBytes))
	if err != nil {
		if t.ctx.Err() != nil {
			return errClosed
		}
		return fmt.Errorf("read the MCP server's answer: %w", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		// 202 Accepted, the answer to a notification or a response.
		if isRequest {
			return fmt.Errorf("the MCP server answered the request %s with %s and no response", env.Method, res.Status)
		}
		return nil
	}
	if mediaType != "application/json" {
		return fmt.Errorf("the MCP server answered %s with content type %q: %s", env.Method, res.Header.Get("Content-Type"), excerpt(body))
	}
	t.in.putPayload(body, nil)
	return nil
}

// readPostStream delivers the messages of the event stream a POST opened.
// For a request (want is its id) it ends at the response; if the stream
// breaks before that, it resumes with Last-Event-ID when the server named
// event IDs, and otherwise answers the request with an error itself so
// that the caller does not wait forever.
func (t *streamableTransport) readPostStream(body io.ReadCloser, want json.RawMessage, cancelReq context.CancelFunc) {
	defer t.wg.Done()
	defer cancelReq()
	var last streamEnd
	retries := 0
	for {
		end := t.readEvents(body, want, last)
		body.Close()
		if end.answered || want == nil || t.ctx.Err() != nil {
			return
		}
		if end.err == nil {
			end.err = errors.New("the stream ended")
		}
		if end.lastID == "" {
			t.in.put(errorResponse(want, "the MCP server's response stream broke before the response: "+end.err.Error()))
			return
		}
		if end.lastID != last.lastID || end.delivered > 0 {
			retries = 0 // progress
		}
		last = end
		var err error
		body, err = t.resume(last, &retries)
		if err != nil {
			if t.ctx.Err() == nil {
				t.in.put(errorResponse(want, "the MCP server's response stream broke and could not be resumed: "+err.Error()))
			}
			return
		}
	}
}

// streamEnd is how an event stream ended.
type streamEnd struct {
	answered  bool          // the response awaited came (the stream was left then)
	delivered int           // messages delivered
	lastID    string        // the stream's last event ID, to resume after
	retry     time.Duration // the reconnection time the server asked for
	err       error         // what broke the stream; nil at its end
}

// readEvents delivers the message events of one event stream until it
// ends or, when want is set, until the response with that id. A stream
// that resumes another (resumed) keeps its last event ID until it names
// another.
func (t *streamableTransport) readEvents(body io.Reader, want json.RawMessage, resumed streamEnd) streamEnd {
	r := sse.NewReader(body)
	r.SetLastID(resumed.lastID)
	delivered := 0
	for {
		data, complete, err := r.Next()
		if errors.Is(err, sse.ErrNotSSE) {
			continue // a field the SSE standard says to ignore
		}
		if err != nil || !complete {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return streamEnd{delivered: delivered, lastID: r.LastID(), retry: r.Retry(), err: err}
		}
		if r.Event() != "message" || len(bytes.TrimSpace(data)) == 0 {
			continue // a priming event holds only an id
		}
		delivered++
		if t.in.putPayload(data, want) {
			return streamEnd{answered: true, delivered: delivered, lastID: r.LastID()}
		}
	}
}

// maxRetryDelay caps the wait before reopening a stream, whatever the
// server asked for.
const maxRetryDelay = 30 * time.Second

// resume reopens a broken event stream with a GET naming its last event
// ID (if any), after the delay the server asked for (or retryDelay), doubling it
// for each attempt in a row that brings nothing new.
func (t *streamableTransport) resume(last streamEnd, retries *int) (io.ReadCloser, error) {
	base := t.retryDelay
	if last.retry > 0 {
		base = last.retry
	}
	for {
		if *retries >= t.maxRetries {
			return nil, fmt.Errorf("gave up after %d attempts", *retries)
		}
		delay := min(base<<min(*retries, 6), maxRetryDelay)
		*retries++
		select {
		case <-t.ctx.Done():
			return nil, errClosed
		case <-time.After(delay):
		}
		body, err := t.get(last.lastID)
		if err == nil {
			return body, nil
		}
		var status *httpStatusError
		if errors.Is(err, errNoStream) || errors.As(err, &status) && status.code == http.StatusNotFound || t.ctx.Err() != nil {
			return nil, err
		}
	}
}

// errNoStream is a 405 to the GET: the server offers no event stream.
var errNoStream = errors.New("the MCP server offers no event stream")

// get opens an event stream with a GET, resuming after lastID if set.
func (t *streamableTransport) get(lastID string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	t.setHeaders(req.Header)
	res, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	// A 404 here does not by itself mean a lost session: many servers
	// route only POST and answer a GET with 404 rather than 405. listen
	// decides, from whether a GET was served before.
	switch {
	case res.StatusCode == http.StatusMethodNotAllowed:
		res.Body.Close()
		return nil, errNoStream
	case res.StatusCode < 200 || res.StatusCode > 299:
		defer res.Body.Close()
		return nil, statusError(http.MethodGet, res)
	}
	if mediaType, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mediaType != "text/event-stream" {
		res.Body.Close()
		return nil, fmt.Errorf("the MCP server answered GET with content type %q", res.Header.Get("Content-Type"))
	}
	return res.Body, nil
}

// listen opens the standalone GET stream once, after initialization. It is
// optional: a server may refuse it (405, or 404 from servers that route
// only POST) or not be reachable that way, and then the session goes on
// without server-initiated messages.
//
// Once served, the stream is reopened whenever it drops (with
// Last-Event-ID when the server named event IDs), as long as reopening
// brings something: a 404 then means that the server forgot the session
// (it restarted, say), which ends Recv with errSessionMissing while the
// session is idle rather than at its next call.
func (t *streamableTransport) listen() {
	t.mu.Lock()
	if t.listening {
		t.mu.Unlock()
		return
	}
	t.listening = true
	t.mu.Unlock()
	if !t.start() {
		return
	}
	go func() {
		defer t.wg.Done()
		var last streamEnd
		retries := 0
		body, err := t.get("")
		if err != nil {
			return // the server offers no GET stream
		}
		for err == nil {
			opened := time.Now()
			end := t.readEvents(body, nil, last)
			body.Close()
			if t.ctx.Err() != nil {
				return
			}
			// Progress resets the bound on reopening: a new event ID, a
			// message, or a stream that lasted (proxies drop idle ones).
			if (end.lastID != "" && end.lastID != last.lastID) || end.delivered > 0 || time.Since(opened) > time.Minute {
				retries = 0
			}
			last = end
			body, err = t.resume(last, &retries)
		}
		var status *httpStatusError
		if errors.As(err, &status) && status.code == http.StatusNotFound && status.withSession {
			t.sessionGone()
		}
	}()
}

func (t *streamableTransport) Recv() ([]byte, error) { return t.in.recv() }

func (t *streamableTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	sessionID, missing := t.sessionID, t.missing
	t.mu.Unlock()
	t.cancel()
	t.in.end(io.EOF, true)
	if sessionID != "" && !missing {
		// The session's end is a courtesy to the server: failures and 405
		// (the server lets sessions expire on its own) are ignored.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), deleteTimeout)
		defer cancel()
		if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.url, nil); err == nil {
			t.setHeaders(req.Header)
			if res, err := t.client.Do(req); err == nil {
				io.Copy(io.Discard, io.LimitReader(res.Body, httpExcerptBytes))
				res.Body.Close()
			}
		}
	}
	t.wg.Wait()
	return nil
}

// errClosed is what a send on a closed transport returns.
var errClosed = errors.New("the MCP connection is closed")

// envelope is what a transport reads of a message: enough to tell a
// request from a notification and to match a response to its request.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func peek(msg []byte) envelope {
	var e envelope
	_ = json.Unmarshal(msg, &e) // a message that is not an object has no id
	if bytes.Equal(e.ID, []byte("null")) {
		e.ID = nil
	}
	return e
}

// sameID reports whether a response's id is the request's, tolerating a
// server that echoes a number as a string.
func sameID(got, want json.RawMessage) bool {
	unquote := func(b []byte) []byte { return bytes.TrimSuffix(bytes.TrimPrefix(b, []byte(`"`)), []byte(`"`)) }
	return len(got) > 0 && (bytes.Equal(got, want) || bytes.Equal(unquote(got), unquote(want)))
}

// errorResponse is the JSON-RPC error answering the request id, made by
// the transport when the server's answer broke off.
func errorResponse(id json.RawMessage, message string) []byte {
	msg, _ := json.Marshal(wireMsg{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: codeInternalError, Message: message}})
	return msg
}

// httpStatusError is an HTTP request that failed with a status.
type httpStatusError struct {
	method, status, excerpt string
	code                    int
	withSession             bool // the request named a session
}

func (e *httpStatusError) Error() string {
	if e.excerpt != "" {
		return fmt.Sprintf("the MCP server answered %s with %s: %s", e.method, e.status, e.excerpt)
	}
	return fmt.Sprintf("the MCP server answered %s with %s", e.method, e.status)
}

// statusError names the status of a failed HTTP request and the start of
// its body, where servers explain why.
func statusError(method string, res *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(res.Body, httpExcerptBytes))
	return &httpStatusError{method: method, status: res.Status, excerpt: excerpt(body), code: res.StatusCode,
		withSession: res.Request != nil && res.Request.Header.Get("Mcp-Session-Id") != ""}
}

// excerpt is the start of a body on one line.
func excerpt(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) <= 200 {
		return s
	}
	cut := 200
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut-- // not inside a UTF-8 sequence
	}
	return s[:cut] + "…"
}

// inbox queues the server's messages until Recv takes them. Putting never
// blocks: the goroutine reading an event stream must not wait for the
// session's reader, which may itself be in Send answering the server.
type inbox struct {
	mu    sync.Mutex
	msgs  [][]byte
	err   error         // what Recv returns once msgs is empty
	ready chan struct{} // a message was queued (capacity 1)
	ended chan struct{} // closed when err is set
}

func newInbox() *inbox {
	return &inbox{ready: make(chan struct{}, 1), ended: make(chan struct{})}
}

func (q *inbox) put(msg []byte) {
	q.mu.Lock()
	if q.err == nil {
		q.msgs = append(q.msgs, msg)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// putPayload queues one message, or each message of a JSON-RPC batch, and
// reports whether one of them is the response with the id want. What is
// not JSON goes to the session as it came, to be reported there.
func (q *inbox) putPayload(data []byte, want json.RawMessage) (answered bool) {
	data = bytes.TrimSpace(data)
	msgs := []json.RawMessage{data}
	if len(data) > 0 && data[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(data, &batch) == nil {
			msgs = batch
		}
	}
	for _, m := range msgs {
		q.put(bytes.Clone(m))
		if want != nil && !answered {
			e := peek(m)
			answered = e.Method == "" && sameID(e.ID, want)
		}
	}
	return answered
}

// end makes Recv return err once the queue is empty, or at once if
// discard drops what is queued. The first end wins.
func (q *inbox) end(err error, discard bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if discard {
		q.msgs = nil
	}
	if q.err == nil {
		q.err = err
		close(q.ended)
	}
}

func (q *inbox) recv() ([]byte, error) {
	for {
		q.mu.Lock()
		if len(q.msgs) > 0 {
			msg := q.msgs[0]
			q.msgs[0] = nil
			q.msgs = q.msgs[1:]
			if len(q.msgs) == 0 {
				q.msgs = nil
			} else {
				select { // wake another receiver for the rest
				case q.ready <- struct{}{}:
				default:
				}
			}
			q.mu.Unlock()
			return msg, nil
		}
		if q.err != nil {
			err := q.err
			q.mu.Unlock()
			return nil, err
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-q.ended:
		}
	}
}
