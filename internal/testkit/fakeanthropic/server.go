// Package fakeanthropic is an in-process stand-in for the Anthropic Messages
// API, for tests: an httptest server that answers POST /v1/messages with the
// real streaming wire format (server-sent events) from a queue of scripted
// responses, injects faults (HTTP errors with retry-after, mid-stream error
// events, cut connections, stalls), and records every request it receives.
//
// Start with New, Enqueue and Requests. Point the code under test at URL():
// the anthropic provider through llm.ProviderConfig.BaseURL, or the corvid
// binary through ANTHROPIC_BASE_URL. Responses are scripted from the test
// process, which owns the server, while the binary runs.
package fakeanthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Server is a fake Anthropic API. Its methods are safe for concurrent use.
type Server struct {
	t    testing.TB
	srv  *httptest.Server
	done chan struct{} // closed by Close: ends stalls and delays at once

	mu        sync.Mutex
	queue     []Response
	requests  []Request
	responses int
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

// URL is the server's base URL (http://127.0.0.1:port), to be used as
// ANTHROPIC_BASE_URL: requests go to URL()+"/v1/messages".
func (s *Server) URL() string { return s.srv.URL }

// Enqueue appends responses to the queue; each POST /v1/messages takes the
// first one. A request that finds the queue empty fails the test and gets
// a 400 invalid_request_error.
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

// RequireAPIKey makes the server answer 401 authentication_error, without
// taking a queued response, to any request whose x-api-key is not key.
func (s *Server) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// Close shuts the server down, ending stalled responses first. New
// registers it with t.Cleanup; calling it earlier is allowed.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	_ = json.Unmarshal(raw, &rec.Body)

	s.mu.Lock()
	s.requests = append(s.requests, rec)
	wantKey := s.apiKey
	s.mu.Unlock()

	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeHTTPError(w, HTTPError(http.StatusNotFound, "not_found_error", "fakeanthropic serves only POST /v1/messages"))
		return
	}
	if wantKey != "" && rec.APIKey() != wantKey {
		writeHTTPError(w, HTTPError(http.StatusUnauthorized, "authentication_error", "invalid x-api-key"))
		return
	}

	s.mu.Lock()
	if len(s.queue) == 0 {
		s.mu.Unlock()
		s.t.Errorf("fakeanthropic: request %d found no scripted response", len(s.Requests()))
		writeHTTPError(w, HTTPError(http.StatusBadRequest, "invalid_request_error", "fakeanthropic: no scripted response left"))
		return
	}
	resp := s.queue[0]
	s.queue = s.queue[1:]
	s.responses++
	n := s.responses
	s.mu.Unlock()

	if resp.MessageID == "" {
		resp.MessageID = "msg_fake_" + strconv.Itoa(n)
	}
	if resp.StopReason == "" {
		resp.StopReason = defaultStopReason(resp.Blocks)
	}
	model := rec.Body.Model
	switch {
	case resp.Fault.Kind == FaultHTTP:
		writeHTTPError(w, resp.Fault)
	case resp.Fault.Kind == FaultCut && resp.Fault.AfterEvents == 0:
		panic(http.ErrAbortHandler)
	case !rec.Body.Stream:
		writeJSON(w, http.StatusOK, messageJSON(resp, model))
	default:
		st := &streamer{w: w, rc: http.NewResponseController(w), fault: resp.Fault, stop: s.done, clientGone: r.Context().Done()}
		st.run(resp, model)
	}
}

func defaultStopReason(blocks []Block) string {
	for _, b := range blocks {
		if b.Kind == KindToolUse {
			return "tool_use"
		}
	}
	return "end_turn"
}

// writeHTTPError answers as the API does on failure: a JSON error body,
// a request-id header, and retry-after when the fault has one.
func writeHTTPError(w http.ResponseWriter, f Fault) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	w.Header().Set("Request-Id", "req_fake")
	writeJSON(w, f.Status, errorBody(f))
}

func errorBody(f Fault) map[string]any {
	return map[string]any{
		"type":       "error",
		"error":      map[string]any{"type": f.ErrorType, "message": f.Message},
		"request_id": "req_fake",
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeanthropic: marshal: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// messageJSON is the whole response as a non-streaming answer.
func messageJSON(resp Response, model string) map[string]any {
	content := []any{}
	for _, b := range resp.Blocks {
		content = append(content, finalBlockJSON(b))
	}
	return map[string]any{
		"id": resp.MessageID, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": resp.StopReason, "stop_sequence": nil,
		"usage": usageJSON(resp.Usage, resp.Usage.OutputTokens),
	}
}

func finalBlockJSON(b Block) map[string]any {
	switch b.Kind {
	case KindThinking:
		return map[string]any{"type": "thinking", "thinking": b.Text, "signature": b.Signature}
	case KindRedactedThinking:
		return map[string]any{"type": "redacted_thinking", "data": b.Data}
	case KindToolUse:
		input := json.RawMessage(b.Input)
		if len(bytes.TrimSpace(input)) == 0 {
			input = json.RawMessage("{}")
		}
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": input}
	default:
		return map[string]any{"type": "text", "text": b.Text}
	}
}

func usageJSON(u Usage, output int64) map[string]any {
	return map[string]any{
		"input_tokens":                u.InputTokens,
		"output_tokens":               output,
		"cache_read_input_tokens":     u.CacheReadInputTokens,
		"cache_creation_input_tokens": u.CacheCreationInputTokens,
	}
}

// wait sleeps d, returning false early if the server closes or the client
// goes away.
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
	case <-clientGone:
	}
	return false
}
