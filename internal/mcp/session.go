package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The MCP client session: JSON-RPC 2.0 over a transport. corvid's own
// rather than the go-sdk's, whose package init (and what it imports) cost
// every corvid start ~3 MiB of resident memory and ~5 ms (ARCHITECTURE.md).

// protocolVersion is the version corvid asks for in initialize: the newest
// the initialize handshake of go-sdk v1.8.0 sends (it tries the stateless
// 2026-07-28 server/discover first, which corvid does not).
const protocolVersion = "2025-11-25"

// supportedVersions are the versions a server may answer with (go-sdk
// v1.8.0's list).
var supportedVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// JSON-RPC error codes.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
)

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// sendError is a request the transport failed to send: it may never have
// reached the server.
type sendError struct{ err error }

func (e *sendError) Error() string { return "sending the request failed: " + e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// errSessionClosed is the error of calls on a session corvid closed.
var errSessionClosed = errors.New("the connection was closed")

// wireMsg is any JSON-RPC message: a request (method and id), a
// notification (method), a response (id and result or error).
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// response is what a pending call receives.
type response struct {
	result json.RawMessage
	err    *rpcError
}

// clientHandler answers what a server sends on its own.
type clientHandler interface {
	// request answers a server's request (ping is answered by the
	// session). An *rpcError is sent as it is; errMethodNotFound
	// becomes -32601; any other error -32603 with its text.
	request(ctx context.Context, method string, params json.RawMessage) (any, error)
	// notify handles a server's notification.
	notify(method string, params json.RawMessage)
}

// errMethodNotFound: the client does not handle the method.
var errMethodNotFound = errors.New("method not found")

// session is one initialized MCP client session.
type session struct {
	t   transport
	h   clientHandler
	log *slog.Logger

	init initializeResult

	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[int64]chan response
	incoming map[string]context.CancelFunc // the server's requests being answered, by id
	err      error                         // why the session ended; nil while it runs
	closed   bool                          // by Close

	life   context.Context // the server's requests' handlers run under it
	cancel context.CancelFunc
	done   chan struct{} // closed once the session ended
	wg     sync.WaitGroup
}

// newSession starts reading t; initialize must be called next.
func newSession(t transport, h clientHandler, log *slog.Logger) *session {
	s := &session{t: t, h: h, log: log, pending: map[int64]chan response{},
		incoming: map[string]context.CancelFunc{}, done: make(chan struct{})}
	s.life, s.cancel = context.WithCancel(context.Background())
	go s.read()
	return s
}

// initialize runs the handshake: initialize, then notifications/initialized.
func (s *session) initialize(ctx context.Context, p initializeParams) error {
	p.ProtocolVersion = protocolVersion
	var res initializeResult
	if err := s.call(ctx, "initialize", p, &res); err != nil {
		return err
	}
	if !slices.Contains(supportedVersions, res.ProtocolVersion) {
		return fmt.Errorf("the server speaks MCP protocol version %q, which corvid does not (it speaks %s to %s)",
			res.ProtocolVersion, supportedVersions[len(supportedVersions)-1], supportedVersions[0])
	}
	s.init = res
	if v, ok := s.t.(versioned); ok {
		v.setProtocolVersion(res.ProtocolVersion)
	}
	return s.notify(ctx, "notifications/initialized", struct{}{})
}

// read dispatches every message from the server until the transport ends.
func (s *session) read() {
	for {
		b, err := s.t.Recv()
		if err != nil {
			s.end(err)
			return
		}
		b = bytes.TrimSpace(b)
		if len(b) > 0 && b[0] == '[' { // a batch (2025-03-26)
			var batch []json.RawMessage
			if err := json.Unmarshal(b, &batch); err != nil {
				s.log.Debug("mcp server sent an unreadable batch", "error", err)
				continue
			}
			for _, m := range batch {
				s.dispatch(m)
			}
			continue
		}
		s.dispatch(b)
	}
}

func (s *session) dispatch(b []byte) {
	var m wireMsg
	if err := json.Unmarshal(b, &m); err != nil {
		s.log.Debug("mcp server sent an unreadable message", "error", err)
		return
	}
	hasID := len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
	switch {
	case m.Method != "" && hasID:
		s.serve(m)
	case m.Method != "":
		s.notification(m)
	case hasID:
		id, ok := parseID(m.ID)
		s.mu.Lock()
		ch := s.pending[id]
		delete(s.pending, id)
		s.mu.Unlock()
		if !ok || ch == nil {
			s.log.Debug("mcp server answered an unknown request", "id", string(m.ID))
			return
		}
		ch <- response{result: m.Result, err: m.Error}
	}
}

// parseID reads the id of one of corvid's requests, as the server echoed
// it (a number, or tolerated, a string of digits).
func parseID(raw json.RawMessage) (int64, bool) {
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return n, true
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		if n, err := strconv.ParseInt(str, 10, 64); err == nil {
			return n, true
		}
	}
	return 0, false
}

// serve answers one of the server's requests in the background.
func (s *session) serve(m wireMsg) {
	if m.Method == "ping" {
		s.reply(m.ID, struct{}{}, nil)
		return
	}
	ctx, cancel := context.WithCancel(s.life)
	key := string(m.ID)
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		cancel()
		return
	}
	s.incoming[key] = cancel
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.incoming, key)
			s.mu.Unlock()
			cancel()
		}()
		res, err := s.h.request(ctx, m.Method, m.Params)
		s.reply(m.ID, res, err)
	}()
}

// reply sends the answer to one of the server's requests.
func (s *session) reply(id json.RawMessage, res any, err error) {
	out := wireMsg{JSONRPC: "2.0", ID: id}
	var rerr *rpcError
	switch {
	case errors.Is(err, errMethodNotFound):
		out.Error = &rpcError{Code: codeMethodNotFound, Message: "method not found"}
	case errors.As(err, &rerr):
		out.Error = rerr
	case err != nil:
		out.Error = &rpcError{Code: codeInternalError, Message: err.Error()}
	default:
		b, merr := json.Marshal(res)
		if merr != nil {
			out.Error = &rpcError{Code: codeInternalError, Message: merr.Error()}
		} else {
			out.Result = b
		}
	}
	b, _ := json.Marshal(out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.t.Send(ctx, b); err != nil {
		s.log.Debug("mcp answer to the server not sent", "error", err)
	}
}

func (s *session) notification(m wireMsg) {
	switch m.Method {
	case "notifications/cancelled":
		var p cancelledParams
		if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
			id, _ := json.Marshal(p.RequestID)
			s.mu.Lock()
			cancel := s.incoming[string(id)]
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	case "notifications/message":
		var p logMessageParams
		_ = json.Unmarshal(m.Params, &p)
		s.log.Debug("mcp server log", "level", p.Level, "logger", p.Logger, "data", string(p.Data))
	default:
		s.h.notify(m.Method, m.Params)
	}
}

// end records why the session ended and fails every pending call.
func (s *session) end(err error) {
	s.mu.Lock()
	if s.closed {
		err = errSessionClosed
	}
	s.err = err
	pending := s.pending
	s.pending = map[int64]chan response{}
	s.mu.Unlock()
	for _, ch := range pending {
		close(ch)
	}
	s.cancel()
	close(s.done)
}

// call sends a request and decodes its result into out (if not nil). It
// returns the server's *rpcError, a *sendError, ctx's error (after telling
// the server with notifications/cancelled) or, when the connection ended
// first, an error saying so.
func (s *session) call(ctx context.Context, method string, params, out any) error {
	id := s.nextID.Add(1)
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	b, err := json.Marshal(wireMsg{JSONRPC: "2.0", ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: p})
	if err != nil {
		return err
	}
	ch := make(chan response, 1)
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return s.ended(err)
	}
	s.pending[id] = ch
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}
	if err := s.t.Send(ctx, b); err != nil {
		forget()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &sendError{err}
	}
	select {
	case r, ok := <-ch:
		if !ok {
			s.mu.Lock()
			err := s.err
			s.mu.Unlock()
			return s.ended(err)
		}
		if r.err != nil {
			return r.err
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(r.result, out); err != nil {
			return fmt.Errorf("the server's answer to %s is unreadable: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		forget()
		if method != "initialize" { // which the client must not cancel
			s.cancelled(id, ctx.Err())
		}
		return ctx.Err()
	}
}

// ended words the end of the session for a call that it cut short.
func (s *session) ended(err error) error {
	switch {
	case errors.Is(err, errSessionClosed), errors.Is(err, errSessionMissing):
		return err
	case err == nil, errors.Is(err, io.EOF):
		return errors.New("the server closed the connection")
	}
	return fmt.Errorf("the connection broke: %w", err)
}

// cancelled tells the server that corvid no longer waits for request id.
func (s *session) cancelled(id int64, why error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.notify(ctx, "notifications/cancelled", cancelledParams{RequestID: id, Reason: why.Error()}); err != nil {
		s.log.Debug("mcp notifications/cancelled not sent", "error", err)
	}
}

// notify sends a notification.
func (s *session) notify(ctx context.Context, method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	b, err := json.Marshal(wireMsg{JSONRPC: "2.0", Method: method, Params: p})
	if err != nil {
		return err
	}
	return s.t.Send(ctx, b)
}

// Close ends the session: the transport closes (an HTTP session is
// deleted, a stdio server's stdin closed) and pending calls fail.
func (s *session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	err := s.t.Close()
	<-s.done
	return err
}

// Wait blocks until the session ended and returns why: nil when corvid
// closed it or the server ended it in order.
func (s *session) Wait() error {
	<-s.done
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || errors.Is(s.err, io.EOF) || errors.Is(s.err, errSessionClosed) {
		return nil
	}
	return s.err
}

// Paginated lists ---------------------------------------------------------

// maxPages bounds the pages of one list (a server whose cursor never ends).
const maxPages = 1000

// list reads every page of method.
func (s *session) list(ctx context.Context, method string, each func(*listResult)) error {
	cursor := ""
	for range maxPages {
		var page listResult
		if err := s.call(ctx, method, listParams{Cursor: cursor}, &page); err != nil {
			return err
		}
		each(&page)
		if page.NextCursor == "" {
			return nil
		}
		cursor = page.NextCursor
	}
	return fmt.Errorf("%s: more than %d pages", method, maxPages)
}

func (s *session) tools(ctx context.Context) ([]*toolDef, error) {
	var out []*toolDef
	err := s.list(ctx, "tools/list", func(p *listResult) { out = append(out, p.Tools...) })
	return out, err
}

func (s *session) prompts(ctx context.Context) ([]*promptDef, error) {
	var out []*promptDef
	err := s.list(ctx, "prompts/list", func(p *listResult) { out = append(out, p.Prompts...) })
	return out, err
}

func (s *session) resources(ctx context.Context) ([]*resourceDef, error) {
	var out []*resourceDef
	err := s.list(ctx, "resources/list", func(p *listResult) { out = append(out, p.Resources...) })
	return out, err
}

func (s *session) resourceTemplates(ctx context.Context) ([]*resourceTemplate, error) {
	var out []*resourceTemplate
	err := s.list(ctx, "resources/templates/list", func(p *listResult) { out = append(out, p.Templates...) })
	return out, err
}
