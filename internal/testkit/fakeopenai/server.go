// Package fakeopenai is an in-process stand-in for the OpenAI API and the
// many servers that copy it, for tests: an httptest server that answers
// POST .../chat/completions (Chat Completions chunks, `data: [DONE]`) and
// POST .../responses (Responses API typed events) with the real streaming
// wire formats, from one queue of scripted responses. It injects faults
// (HTTP errors with retry-after, mid-stream errors, cut connections,
// stalls, malformed events) and records every request it receives.
//
// Start with New, Enqueue and Requests. Point the code under test at
// BaseURL(): the openai provider through llm.ProviderConfig.BaseURL, or the
// corvid binary through OPENAI_BASE_URL (or OPENROUTER_BASE_URL, ...).
package fakeopenai

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
	Header http.Header
	Raw    []byte         // the body as sent
	Body   map[string]any // the body decoded, nil if it was not JSON
}

// APIKey is the bearer token of the request ("" when none was sent).
func (r Request) APIKey() string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// Endpoint is "chat" or "responses".
func (r Request) Endpoint() string {
	if strings.HasSuffix(r.Path, "/responses") {
		return "responses"
	}
	return "chat"
}

// Server is a fake OpenAI-compatible API. Its methods are safe for
// concurrent use.
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

// URL is the server's root (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL }

// BaseURL is URL()+"/v1", the value for a base URL setting: requests go to
// BaseURL()+"/chat/completions" and BaseURL()+"/responses".
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Enqueue appends responses to the queue; each request takes the first
// one. A request that finds the queue empty fails the test and gets a 400.
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

// RequireAPIKey makes the server answer 401 invalid_api_key, without taking
// a queued response, to any request whose bearer token is not key.
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
	var resp Response
	ok := len(s.queue) > 0
	if ok && (wantKey == "" || rec.APIKey() == wantKey) {
		resp = s.queue[0]
		s.queue = s.queue[1:]
		s.responses++
	}
	n := s.responses
	s.mu.Unlock()

	if r.Method != http.MethodPost || !(strings.HasSuffix(r.URL.Path, "/chat/completions") || strings.HasSuffix(r.URL.Path, "/responses")) {
		writeError(w, Fault{Status: 404, Code: "not_found", Type: "invalid_request_error", Message: "no route " + r.Method + " " + r.URL.Path})
		return
	}
	if wantKey != "" && rec.APIKey() != wantKey {
		writeError(w, HTTPError(401, "invalid_api_key", "Incorrect API key provided"))
		return
	}
	if !ok {
		s.t.Errorf("fakeopenai: request %s %s with no scripted response left", r.Method, r.URL.Path)
		writeError(w, HTTPError(400, "no_script", "fakeopenai: no scripted response left"))
		return
	}
	if resp.Fault.Kind == FaultHTTP {
		if resp.Fault.RetryAfter != "" {
			w.Header().Set("Retry-After", resp.Fault.RetryAfter)
		}
		writeError(w, resp.Fault)
		return
	}
	if resp.Model == "" {
		resp.Model, _ = rec.Body["model"].(string)
	}
	st := &streamer{w: w, resp: resp, done: s.done, gone: r.Context().Done(), n: n}
	if resp.Fault.Kind == FaultCut && resp.Fault.AfterEvents == 0 {
		panic(http.ErrAbortHandler)
	}
	if resp.Fault.Kind == FaultStall && resp.Fault.AfterEvents == 0 {
		if !wait(resp.Fault.Stall, s.done, st.gone) {
			return
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	st.flush()
	if rec.Endpoint() == "responses" {
		st.responses()
	} else {
		includeUsage := false
		if so, ok := rec.Body["stream_options"].(map[string]any); ok {
			includeUsage, _ = so["include_usage"].(bool)
		}
		st.chat(includeUsage)
	}
}

func writeError(w http.ResponseWriter, f Fault) {
	body := map[string]any{"error": map[string]any{"message": f.Message, "type": f.Type, "code": f.Code, "param": nil}}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Status)
	_ = json.NewEncoder(w).Encode(body)
}

// wait sleeps d, or until stop or clientGone; it reports whether the whole
// d elapsed.
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

// errStop unwinds a streamer once a fault ended the stream.
type errStop struct{}

// streamer writes one scripted response as server-sent events.
type streamer struct {
	w      http.ResponseWriter
	resp   Response
	done   <-chan struct{}
	gone   <-chan struct{}
	n      int // response number, for ids
	events int // events written
	seq    int // responses API sequence_number
}

// event writes one SSE event (name "" for data-only), first applying the
// fault due at this point. It panics errStop when the stream must end.
func (st *streamer) event(name string, payload any) {
	st.before(name != "")
	b, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("fakeopenai: marshal event: %v", err))
	}
	st.writeRaw(name, string(b))
	st.events++
}

// doneMarker writes the chat terminator, after a fault scheduled past the last
// event.
func (st *streamer) doneMarker() {
	st.before(false)
	st.writeRaw("", "[DONE]")
}

// before applies the fault due after st.events events and the per-event
// delay. typed says whether the stream uses event names (responses).
func (st *streamer) before(typed bool) {
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
			st.writeRaw("", "{this is not json")
		case FaultStreamError:
			st.streamError(typed)
			panic(errStop{})
		}
	}
	if !wait(st.resp.EventDelay, st.done, st.gone) {
		panic(errStop{})
	}
}

func (st *streamer) streamError(typed bool) {
	f := st.resp.Fault
	if typed {
		st.writeRaw("error", mustJSON(map[string]any{"type": "error", "code": f.Code, "message": f.Message, "param": nil, "sequence_number": st.nextSeq()}))
		return
	}
	st.writeRaw("", mustJSON(map[string]any{"error": map[string]any{"message": f.Message, "type": f.Type, "code": f.Code}}))
}

func (st *streamer) writeRaw(name, data string) {
	if name != "" {
		fmt.Fprintf(st.w, "event: %s\n", name)
	}
	fmt.Fprintf(st.w, "data: %s\n\n", data)
	st.flush()
}

func (st *streamer) flush() {
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (st *streamer) nextSeq() int {
	st.seq++
	return st.seq - 1
}

// run calls body, turning errStop into a quiet end of the handler.
func (st *streamer) run(body func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(errStop); ok {
				return
			}
			panic(r)
		}
	}()
	body()
}

func (st *streamer) chunkSize() int {
	if st.resp.ChunkSize > 0 {
		return st.resp.ChunkSize
	}
	return 8
}

// pieces splits s into pieces of about n bytes, never inside a rune. An
// empty s is no pieces.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && !isRuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (st *streamer) finishReason() string {
	if st.resp.FinishReason != "" {
		return st.resp.FinishReason
	}
	for _, b := range st.resp.Blocks {
		if b.Kind == KindToolCall {
			return "tool_calls"
		}
	}
	return "stop"
}

func (st *streamer) callID(i int, b Block) string {
	if b.ID != "" {
		return b.ID
	}
	return fmt.Sprintf("call_%d_%d", st.n, i)
}
