// Package replay serves recorded provider traffic to corvid in tests: a
// tiny HTTP server that answers each request with the next recorded
// response, byte for byte, and keeps every request corvid sent (headers,
// body, arrival time) for the test to compare against what the real API
// accepted. It serves every protocol the recorded suites replay:
// Anthropic Messages and Gemini (test/recorded/anthropic, gemini), OpenAI
// Responses and Chat Completions (test/recorded/openai, chat).
//
// Recordings come in these shapes, all kept byte-identical in testdata
// (sources in test/recorded/SOURCES.md and SOURCES-openai.md; CheckFixtures
// and CheckSums guard them):
//   - chunk files (one JSON event per line, as the Vercel AI SDK keeps
//     them): Chunks frames them as the server-sent events the API sent,
//     ChatChunks adds the "data: [DONE]" that ends a Chat Completions
//     stream, and Split cuts a file holding several responses;
//   - VCR cassettes (YAML, as pydantic-ai keeps them): Cassette reads each
//     interaction's request and response; GoVCR reads go-vcr's layout.
package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Response is one recorded answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Request is one request corvid sent.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	At     time.Time // when it arrived
}

// JSON decodes the body into a generic value.
func (r Request) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return v
}

// Server answers requests with recorded responses, in order.
type Server struct {
	*httptest.Server
	t         testing.TB
	mu        sync.Mutex
	responses []Response
	requests  []Request
}

// New starts a server that plays responses in order; a request beyond the
// last one fails the test and is answered 500.
func New(t testing.TB, responses ...Response) *Server {
	s := &Server{t: t, responses: responses}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	at := time.Now()
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, At: at})
	var resp *Response
	if n < len(s.responses) {
		resp = &s.responses[n]
	}
	s.mu.Unlock()
	if resp == nil {
		s.t.Errorf("replay: request %d (%s %s) has no recorded response", n+1, r.Method, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":"replay: no recorded response left for this request","code":"replay_exhausted"}}`)
		return
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		_, _ = w.Write(resp.Body)
		return
	}
	// An event stream goes out event by event, as the API sent it.
	for _, ev := range bytes.SplitAfter(resp.Body, []byte("\n\n")) {
		_, _ = w.Write(ev)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MustRequests returns what the server received, failing the test unless
// it is n requests.
func (s *Server) MustRequests(t testing.TB, n int) []Request {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) != n {
		t.Fatalf("corvid sent %d requests, want %d", len(reqs), n)
	}
	return reqs
}

// Items returns the list of objects under key in the JSON body (a Chat
// Completions request's "messages", a Responses request's "input"),
// failing the test when it is not one.
func (r Request) Items(t testing.TB, key string) []map[string]any {
	t.Helper()
	list, ok := r.JSON(t)[key].([]any)
	if !ok {
		t.Fatalf("request %s is not a list: %s", key, r.Body)
	}
	var out []map[string]any
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			t.Fatalf("request %s holds %v, not an object: %s", key, it, r.Body)
		}
		out = append(out, m)
	}
	return out
}

// Where returns the items whose field key is value (e.g. "role",
// "assistant"; "type", "reasoning").
func Where(items []map[string]any, key, value string) []map[string]any {
	var out []map[string]any
	for _, it := range items {
		if it[key] == value {
			out = append(out, it)
		}
	}
	return out
}
