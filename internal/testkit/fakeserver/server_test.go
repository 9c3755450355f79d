package fakeserver

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// lineWire is a minimal wire format for testing the core: POST /v1/lines
// streams each line of a response as a data-only event.
type lineWire struct{}

type lineResponse struct {
	Lines []string
	Fault Fault
}

func (lineWire) Record(r *http.Request, body []byte) string {
	return r.Method + " " + r.URL.Path + " " + string(body)
}
func (lineWire) APIKey(rec string) string { return strings.Fields(rec)[2] }
func (lineWire) Routed(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/v1/lines"
}
func (lineWire) Refuse(w http.ResponseWriter, _ *http.Request, why Refusal) {
	WriteJSON(w, http.StatusBadRequest, map[string]any{"refusal": int(why)})
}
func (lineWire) Fault(resp lineResponse) Fault { return resp.Fault }
func (lineWire) WriteError(w http.ResponseWriter, _ lineResponse) {
	WriteJSON(w, http.StatusTooManyRequests, map[string]any{"error": "slow down"})
}
func (lineWire) Answer(_ http.ResponseWriter, _ *http.Request, _ string, resp lineResponse, n int, st *Stream) {
	st.ErrorEvent = func() (string, any) { return "error", map[string]any{"n": n} }
	for _, l := range resp.Lines {
		st.Event("", l)
	}
	st.Due()
	st.Write("", "[DONE]")
}

type quietTB struct {
	testing.TB
	failures []string
}

func (q *quietTB) Errorf(format string, args ...any) {
	q.failures = append(q.failures, fmt.Sprintf(format, args...))
}

func post(t *testing.T, url, path, key string) (status int, header http.Header, body string) {
	t.Helper()
	resp, err := http.Post(url+path, "text/plain", strings.NewReader(key))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestFaultFiresBeforeTheEventAfterItsCount(t *testing.T) {
	for _, tc := range []struct {
		fault Fault
		want  string
	}{
		{Fault{}, "data: \"a\"\n\ndata: \"b\"\n\ndata: [DONE]\n\n"},
		{Fault{Kind: FaultMalformed, AfterEvents: 1}, "data: \"a\"\n\ndata: {this is not json\n\ndata: \"b\"\n\ndata: [DONE]\n\n"},
		{Fault{Kind: FaultStreamError, AfterEvents: 1}, "data: \"a\"\n\nevent: error\ndata: {\"n\":1}\n\n"},
		// Past the last event, the fault fires at the wire's closing Due.
		{Fault{Kind: FaultStreamError, AfterEvents: 2}, "data: \"a\"\n\ndata: \"b\"\n\nevent: error\ndata: {\"n\":1}\n\n"},
	} {
		s := New[string, lineResponse](t, "lines", lineWire{})
		s.Enqueue(lineResponse{Lines: []string{"a", "b"}, Fault: tc.fault})
		if _, _, body := post(t, s.URL(), "/v1/lines", "k"); body != tc.want {
			t.Errorf("fault %+v: body %q, want %q", tc.fault, body, tc.want)
		}
	}
}

func TestHTTPFaultSendsRetryAfter(t *testing.T) {
	s := New[string, lineResponse](t, "lines", lineWire{})
	s.Enqueue(lineResponse{Fault: Fault{Kind: FaultHTTP, RetryAfter: RetryAfterSeconds(1500 * time.Millisecond)}})
	status, h, _ := post(t, s.URL(), "/v1/lines", "k")
	if status != http.StatusTooManyRequests || h.Get("Retry-After") != "2" {
		t.Errorf("status %d retry-after %q, want 429 and 2", status, h.Get("Retry-After"))
	}
}

func TestRefusalsTakeNoResponseAndAnEmptyQueueFailsTheTest(t *testing.T) {
	q := &quietTB{TB: t}
	s := New[string, lineResponse](q, "lines", lineWire{})
	s.RequireAPIKey("good")
	s.Enqueue(lineResponse{Lines: []string{"a"}})
	for _, tc := range []struct{ path, key, want string }{
		{"/v1/other", "bad", `{"refusal":0}`}, // the route is checked first
		{"/v1/lines", "bad", `{"refusal":1}`},
	} {
		if _, _, body := post(t, s.URL(), tc.path, tc.key); strings.TrimSpace(body) != tc.want {
			t.Errorf("%s with key %s: %q, want %s", tc.path, tc.key, body, tc.want)
		}
	}
	if s.Pending() != 1 || len(q.failures) != 0 {
		t.Fatalf("pending %d, failures %q: want the response still queued and no failure", s.Pending(), q.failures)
	}
	post(t, s.URL(), "/v1/lines", "good")
	if _, _, body := post(t, s.URL(), "/v1/lines", "good"); strings.TrimSpace(body) != `{"refusal":2}` || len(q.failures) != 1 {
		t.Errorf("empty queue: %q, failures %q; want refusal 2 and one test failure", body, q.failures)
	}
	if n := len(s.Requests()); n != 4 {
		t.Errorf("recorded %d requests, want all 4", n)
	}
}

func TestCloseEndsAStall(t *testing.T) {
	s := New[string, lineResponse](t, "lines", lineWire{})
	s.Enqueue(lineResponse{Lines: []string{"a"}, Fault: Fault{Kind: FaultStall, AfterEvents: 1, Stall: time.Hour}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Post(s.URL()+"/v1/lines", "text/plain", strings.NewReader("k"))
		if err == nil {
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	}()
	for s.Pending() != 0 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a stalled response outlived Close")
	}
}

func TestPiecesStretchToTheEndOfARune(t *testing.T) {
	got := strings.Join(Pieces("héllo", 2), "|")
	if got != "hé|ll|o" {
		t.Errorf("Pieces = %q, want hé|ll|o", got)
	}
}
