// Package chatreplay serves recorded OpenAI-protocol traffic (Responses and
// Chat Completions) to a corvid under test and keeps what corvid sent.
//
// A recording is a fixture file kept byte-identical to its public source
// (see test/recorded/SOURCES-openai.md). Most sources store a stream as
// "chunks": one JSON event per line, without the SSE framing the service
// put around them; Server adds that framing ("data: <line>\n\n") as it
// serves, so the bytes of every event are the recorded ones. A file holding
// several consecutive responses (a tool loop) is cut with Split.
//
// Start with Start and Response; CheckSums guards the fixtures.
package chatreplay

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Response is one recorded answer.
type Response struct {
	Status int         // 0 means 200
	Header http.Header // added to the answer
	// Chunks are JSON events, one a line, served as SSE data events.
	Chunks []byte
	// Done appends "data: [DONE]", as Chat Completions servers end a stream.
	Done bool
	// Body is served as it is when Chunks is empty (an error answer).
	Body []byte
}

// Request is what corvid sent.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	At           time.Time // when it arrived
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

// Server answers each request with the next queued Response.
type Server struct {
	URL string

	mu    sync.Mutex
	queue []Response
	reqs  []Request
}

// Start serves responses in order on loopback until the test ends. A
// request beyond the queue gets a 599 whose message says so.
func Start(t testing.TB, responses ...Response) *Server {
	t.Helper()
	s := &Server{queue: responses}
	ts := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, At: time.Now()})
	var res Response
	ok := len(s.queue) > 0
	if ok {
		res, s.queue = s.queue[0], s.queue[1:]
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":{"message":"replay: no recorded response left for this request","code":"replay_exhausted"}}`, 599)
		return
	}
	for k, vs := range res.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := res.Status
	if status == 0 {
		status = http.StatusOK
	}
	if len(res.Chunks) == 0 {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write(res.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(status)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	for _, line := range Lines(res.Chunks) {
		_, _ = fmt.Fprintf(w, "data: %s\n\n", line)
		flush()
	}
	if res.Done {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
		flush()
	}
}

// Lines returns the non-empty lines of a chunks file, without their line
// ends.
func Lines(chunks []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(chunks))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		if l := bytes.TrimRight(sc.Bytes(), "\r"); len(bytes.TrimSpace(l)) > 0 {
			out = append(out, append([]byte(nil), l...))
		}
	}
	return out
}

// Split cuts a chunks file holding several responses into one chunks
// value per response: a new one begins at each line containing marker
// (for the Responses API, `"type":"response.created"`).
func Split(chunks []byte, marker string) [][]byte {
	var out [][]byte
	for _, l := range Lines(chunks) {
		if bytes.Contains(l, []byte(marker)) || len(out) == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(append(out[len(out)-1], l...), '\n')
	}
	return out
}

// Events decodes every line of chunks.
func Events(t testing.TB, chunks []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range Lines(chunks) {
		var v map[string]any
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("chunk line %d: %v", i+1, err)
		}
		out = append(out, v)
	}
	return out
}

// Fixture reads testdata/name.
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CheckSums verifies that testdata/SHA256SUMS (the `sha256sum` format)
// lists every other file of testdata with its digest, so that a fixture
// edited by hand, or added without its provenance, fails the suite.
func CheckSums(t testing.TB) {
	t.Helper()
	list, err := os.ReadFile(filepath.Join("testdata", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not \"<sha256>  <name>\"", line)
		}
		want[name] = sum
	}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "SHA256SUMS" {
			continue
		}
		seen[e.Name()] = true
		b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		got := hex.EncodeToString(sum[:])
		switch w, ok := want[e.Name()]; {
		case !ok:
			t.Errorf("testdata/%s is not listed in SHA256SUMS (and its source in test/recorded/SOURCES-openai.md)", e.Name())
		case w != got:
			t.Errorf("testdata/%s has sha256 %s, want %s: recordings are kept byte-identical to their source", e.Name(), got, w)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("SHA256SUMS lists %s, which testdata lacks", name)
		}
	}
}
