// Package fakeserver is the plumbing the fake model servers of the testkit
// (fakeanthropic, fakeopenai, fakegemini) share, so that each of them holds
// only its provider's wire format: an httptest server with a queue of
// scripted responses, a record of every request, an API key check, and the
// faults a response can carry (HTTP errors with retry-after, mid-stream
// errors, cut connections, stalls, malformed events), applied to a stream of
// server-sent events.
//
// Start with Server and the Wire a provider package implements for it; a
// Wire's Answer writes its events through Stream, which fires the fault when
// its turn comes. Tests use the provider packages, not this one.
package fakeserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Wire is what a provider's fake supplies to Server: how a request is
// recorded and routed, and how the answers look on the wire.
type Wire[Req, Resp any] interface {
	// Record is the record of request r with its body.
	Record(r *http.Request, body []byte) Req
	// APIKey is the key rec carries, compared with the one RequireAPIKey set.
	APIKey(rec Req) string
	// Routed reports whether the fake serves r's method and path.
	Routed(r *http.Request) bool
	// Refuse answers a request that gets no scripted response.
	Refuse(w http.ResponseWriter, r *http.Request, why Refusal)
	// Fault is the fault scripted in resp.
	Fault(resp Resp) Fault
	// WriteError answers with resp's FaultHTTP; any retry-after header is
	// already set.
	WriteError(w http.ResponseWriter, resp Resp)
	// Answer answers rec with resp, the n-th response served (from 1),
	// writing any stream through st. Faults other than FaultHTTP and a cut
	// before the first event are st's to fire.
	Answer(w http.ResponseWriter, r *http.Request, rec Req, resp Resp, n int, st *Stream)
}

// Refusal says why a request gets no scripted response.
type Refusal int

const (
	// NotRouted: the fake does not serve the method and path.
	NotRouted Refusal = iota
	// WrongKey: RequireAPIKey set a key and the request carries another.
	WrongKey
	// NoScript: the queue was empty; the test has failed.
	NoScript
)

// Server is a fake model API answering from a queue of scripted responses.
// Its methods are safe for concurrent use.
type Server[Req, Resp any] struct {
	t    testing.TB
	name string // the provider package, in test failures
	wire Wire[Req, Resp]
	srv  *httptest.Server
	done chan struct{} // closed by Close: ends stalls and delays at once

	mu        sync.Mutex
	queue     []Resp
	requests  []Req
	responses int
	apiKey    string
	closeOnce sync.Once
}

// New starts a server speaking wire that is closed when the test ends. name
// prefixes the test failure of a request that finds the queue empty.
func New[Req, Resp any](t testing.TB, name string, wire Wire[Req, Resp]) *Server[Req, Resp] {
	t.Helper()
	s := &Server[Req, Resp]{t: t, name: name, wire: wire, done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.Close)
	return s
}

// URL is the server's root, http://127.0.0.1:port.
func (s *Server[Req, Resp]) URL() string { return s.srv.URL }

// Enqueue appends responses to the queue; each served request takes the
// first one.
func (s *Server[Req, Resp]) Enqueue(rs ...Resp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, rs...)
}

// Pending is the number of queued responses not yet served.
func (s *Server[Req, Resp]) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request received so far, in order, including the
// refused ones.
func (s *Server[Req, Resp]) Requests() []Req {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Req(nil), s.requests...)
}

// RequireAPIKey makes the server refuse (WrongKey), without taking a queued
// response, any request whose key is not key. "" accepts any key.
func (s *Server[Req, Resp]) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// Close shuts the server down, ending stalled responses first. New
// registers it with t.Cleanup; calling it earlier is allowed.
func (s *Server[Req, Resp]) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *Server[Req, Resp]) serveHTTP(w http.ResponseWriter, r *http.Request) {
	rec, resp, n, ok := s.admit(w, r)
	if !ok {
		return
	}
	f := s.wire.Fault(resp)
	switch {
	case f.Kind == FaultHTTP:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		s.wire.WriteError(w, resp)
		return
	case f.Kind == FaultCut && f.AfterEvents == 0:
		// net/http closes the connection before any response byte.
		panic(http.ErrAbortHandler)
	}
	st := &Stream{w: w, rc: http.NewResponseController(w), fault: f, stop: s.done, clientGone: r.Context().Done()}
	defer st.recoverStop()
	s.wire.Answer(w, r, rec, resp, n, st)
}

// admit records the request and takes its response from the queue, or
// refuses it: an unserved route first, then a wrong key, then an empty
// queue (which fails the test).
func (s *Server[Req, Resp]) admit(w http.ResponseWriter, r *http.Request) (rec Req, resp Resp, n int, ok bool) {
	body, _ := io.ReadAll(r.Body)
	rec = s.wire.Record(r, body)
	routed := s.wire.Routed(r)

	s.mu.Lock()
	s.requests = append(s.requests, rec)
	seq := len(s.requests)
	keyOK := s.apiKey == "" || s.wire.APIKey(rec) == s.apiKey
	scripted := len(s.queue) > 0
	if routed && keyOK && scripted {
		resp = s.queue[0]
		s.queue = s.queue[1:]
		s.responses++
		n = s.responses
	}
	s.mu.Unlock()

	switch {
	case !routed:
		s.wire.Refuse(w, r, NotRouted)
	case !keyOK:
		s.wire.Refuse(w, r, WrongKey)
	case !scripted:
		s.t.Errorf("%s: request %d (%s %s) found no scripted response left", s.name, seq, r.Method, r.URL.Path)
		s.wire.Refuse(w, r, NoScript)
	default:
		return rec, resp, n, true
	}
	return rec, resp, n, false
}

// WriteJSON answers with status and v as a JSON body (one line, ending in a
// newline), as the provider packages answer errors.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
