// Package fakegemini is an in-process stand-in for the Gemini API, for
// tests: an httptest server that answers
// POST /v1beta/models/{model}:streamGenerateContent?alt=sse with the real
// streaming wire format from a queue of scripted responses, injects faults
// (HTTP errors with retry-after, mid-stream errors, cut connections,
// stalls, malformed chunks) and records every request it receives.
//
// Start with New, Enqueue and Requests. Point the code under test at URL():
// the gemini provider through llm.ProviderConfig.BaseURL, or the corvid
// binary through GEMINI_BASE_URL.
package fakegemini

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Raw    []byte
	Body   map[string]any // nil if the body was not JSON
}

// APIKey is the x-goog-api-key header (or the key query parameter).
func (r Request) APIKey() string {
	if k := r.Header.Get("X-Goog-Api-Key"); k != "" {
		return k
	}
	if _, after, ok := strings.Cut(r.Query, "key="); ok {
		k, _, _ := strings.Cut(after, "&")
		return k
	}
	return ""
}

// Model is the model id of the request path.
func (r Request) Model() string {
	_, after, _ := strings.Cut(r.Path, "/models/")
	m, _, _ := strings.Cut(after, ":")
	return m
}

// Server is a fake Gemini API. Its methods are safe for concurrent use.
type Server struct {
	t    testing.TB
	srv  *httptest.Server
	done chan struct{}

	mu        sync.Mutex
	queue     []Response
	requests  []Request
	apiKey    string
	closeOnce sync.Once
}

// New starts a server that is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.Close)
	return s
}

// URL is the base URL (http://127.0.0.1:port), to be used as
// GEMINI_BASE_URL.
func (s *Server) URL() string { return s.srv.URL }

// Enqueue appends responses to the queue; each request takes the first.
func (s *Server) Enqueue(rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, rs...)
}

// Pending is the number of queued responses not yet served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequireAPIKey makes the server answer 400 API_KEY_INVALID (as Gemini
// does) to any request whose key is not key, without taking a response.
func (s *Server) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// Close shuts the server down, ending stalled responses first.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: raw}
	_ = json.Unmarshal(raw, &rec.Body)

	s.mu.Lock()
	s.requests = append(s.requests, rec)
	wantKey := s.apiKey
	var resp Response
	ok := len(s.queue) > 0
	if ok && (wantKey == "" || rec.APIKey() == wantKey) {
		resp = s.queue[0]
		s.queue = s.queue[1:]
	}
	s.mu.Unlock()

	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") || r.URL.Query().Get("alt") != "sse" {
		writeError(w, Fault{Status: 404, StatusText: "NOT_FOUND", Message: "no route " + r.Method + " " + r.URL.String()})
		return
	}
	if wantKey != "" && rec.APIKey() != wantKey {
		writeError(w, HTTPError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."))
		return
	}
	if !ok {
		s.t.Errorf("fakegemini: request %s with no scripted response left", r.URL.Path)
		writeError(w, HTTPError(400, "INVALID_ARGUMENT", "fakegemini: no scripted response left"))
		return
	}
	f := resp.Fault
	if f.Kind == FaultHTTP {
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeError(w, f)
		return
	}
	if f.Kind == FaultCut && f.AfterEvents == 0 {
		panic(http.ErrAbortHandler)
	}
	gone := r.Context().Done()
	if f.Kind == FaultStall && f.AfterEvents == 0 && !wait(f.Stall, s.done, gone) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	st := &streamer{w: w, resp: resp, done: s.done, gone: gone, model: rec.Model()}
	st.run()
}

func writeError(w http.ResponseWriter, f Fault) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Status)
	_ = json.NewEncoder(w).Encode(errorBody(f))
}

func errorBody(f Fault) map[string]any {
	return map[string]any{"error": map[string]any{"code": f.Status, "message": f.Message, "status": f.StatusText}}
}

func wait(d time.Duration, stop, clientGone <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	case <-clientGone:
		return false
	}
}

type errStop struct{}

type streamer struct {
	w          http.ResponseWriter
	resp       Response
	done, gone <-chan struct{}
	model      string
	events     int
}

func (st *streamer) run() {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(errStop); !ok {
				panic(r)
			}
		}
	}()
	n := st.resp.ChunkSize
	if n <= 0 {
		n = 8
	}
	for _, b := range st.resp.Blocks {
		switch b.Kind {
		case KindText, KindThought:
			for i, p := range pieces(b.Text, n) {
				part := map[string]any{"text": p}
				if b.Kind == KindThought {
					part["thought"] = true
				}
				if i == 0 && len(b.Signature) > 0 {
					part["thoughtSignature"] = b.Signature // []byte marshals as base64
				}
				st.chunk(part, "", nil)
			}
		case KindFunctionCall:
			fc := map[string]any{"name": b.Name, "args": b.Args}
			if b.ID != "" {
				fc["id"] = b.ID
			}
			part := map[string]any{"functionCall": fc}
			if len(b.Signature) > 0 {
				part["thoughtSignature"] = b.Signature
			}
			st.chunk(part, "", nil)
		}
	}
	finish := st.resp.FinishReason
	if finish == "" {
		finish = "STOP"
	}
	if finish == "-" {
		finish = ""
	}
	u := st.resp.Usage
	st.chunk(nil, finish, map[string]any{
		"promptTokenCount":        u.PromptTokens,
		"candidatesTokenCount":    u.CandidatesTokens,
		"cachedContentTokenCount": u.CachedTokens,
		"thoughtsTokenCount":      u.ThoughtsTokens,
		"totalTokenCount":         u.PromptTokens + u.CandidatesTokens + u.ThoughtsTokens,
	})
	st.before()
}

// chunk writes one GenerateContentResponse with one part (or none).
func (st *streamer) chunk(part map[string]any, finish string, usage map[string]any) {
	st.before()
	cand := map[string]any{"index": 0}
	parts := []any{}
	if part != nil {
		parts = append(parts, part)
	}
	cand["content"] = map[string]any{"role": "model", "parts": parts}
	if finish != "" {
		cand["finishReason"] = finish
	}
	body := map[string]any{"candidates": []any{cand}, "modelVersion": st.model, "responseId": "fake-response"}
	if usage != nil {
		body["usageMetadata"] = usage
	}
	b, _ := json.Marshal(body)
	st.write(string(b))
	st.events++
}

func (st *streamer) before() {
	f := st.resp.Fault
	if f.Kind != NoFault && st.events == f.AfterEvents {
		switch f.Kind {
		case FaultCut:
			panic(http.ErrAbortHandler)
		case FaultStall:
			if !wait(f.Stall, st.done, st.gone) {
				panic(errStop{})
			}
		case FaultMalformed:
			st.write("{this is not json")
		case FaultStreamError:
			b, _ := json.Marshal(errorBody(f))
			st.write(string(b))
			panic(errStop{})
		}
	}
	if !wait(st.resp.EventDelay, st.done, st.gone) {
		panic(errStop{})
	}
}

func (st *streamer) write(data string) {
	fmt.Fprintf(st.w, "data: %s\r\n\r\n", data)
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && s[end]&0xC0 == 0x80 {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
