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
	"net/http"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit/fakeserver"
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

// Server is a fake OpenAI-compatible API; its methods, from fakeserver,
// are safe for concurrent use. Each request takes the first response
// Enqueue queued; a request that finds the queue empty fails the test and
// gets a 400. After RequireAPIKey, a request whose bearer token is another
// gets a 401 invalid_api_key and takes no response.
type Server struct {
	*fakeserver.Server[Request, Response]
}

// New starts a server that is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	return &Server{fakeserver.New[Request, Response](t, "fakeopenai", wire{})}
}

// BaseURL is URL()+"/v1", the value for a base URL setting: requests go to
// BaseURL()+"/chat/completions" and BaseURL()+"/responses".
func (s *Server) BaseURL() string { return s.URL() + "/v1" }

// wire is the OpenAI API's side of fakeserver.Server.
type wire struct{}

func (wire) Record(r *http.Request, body []byte) Request {
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: body}
	_ = json.Unmarshal(body, &rec.Body)
	return rec
}

func (wire) APIKey(rec Request) string { return rec.APIKey() }

func (wire) Routed(r *http.Request) bool {
	return r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/chat/completions") || strings.HasSuffix(r.URL.Path, "/responses"))
}

func (wire) Refuse(w http.ResponseWriter, r *http.Request, why fakeserver.Refusal) {
	switch why {
	case fakeserver.NotRouted:
		writeError(w, Fault{Status: 404, Code: "not_found", Type: "invalid_request_error", Message: "no route " + r.Method + " " + r.URL.Path})
	case fakeserver.WrongKey:
		writeError(w, HTTPError(401, "invalid_api_key", "Incorrect API key provided"))
	default:
		writeError(w, HTTPError(400, "no_script", "fakeopenai: no scripted response left"))
	}
}

func (wire) Fault(resp Response) fakeserver.Fault {
	f := resp.Fault
	return fakeserver.Fault{Kind: f.Kind, RetryAfter: f.RetryAfter, AfterEvents: f.AfterEvents, Stall: f.Stall}
}

func (wire) WriteError(w http.ResponseWriter, resp Response) { writeError(w, resp.Fault) }

func (wire) Answer(w http.ResponseWriter, _ *http.Request, rec Request, resp Response, n int, stream *fakeserver.Stream) {
	if resp.Model == "" {
		resp.Model, _ = rec.Body["model"].(string)
	}
	st := &streamer{Stream: stream, resp: resp, n: n}
	st.EventDelay = resp.EventDelay
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	st.Start()
	if rec.Endpoint() == "responses" {
		st.ErrorEvent = func() (string, any) {
			f := resp.Fault
			return "error", map[string]any{"type": "error", "code": f.Code, "message": f.Message, "param": nil, "sequence_number": st.nextSeq()}
		}
		st.responses()
		return
	}
	st.ErrorEvent = func() (string, any) {
		f := resp.Fault
		return "", map[string]any{"error": map[string]any{"message": f.Message, "type": f.Type, "code": f.Code}}
	}
	includeUsage := false
	if so, ok := rec.Body["stream_options"].(map[string]any); ok {
		includeUsage, _ = so["include_usage"].(bool)
	}
	st.chat(includeUsage)
}

func writeError(w http.ResponseWriter, f Fault) {
	body := map[string]any{"error": map[string]any{"message": f.Message, "type": f.Type, "code": f.Code, "param": nil}}
	fakeserver.WriteJSON(w, f.Status, body)
}

// streamer writes one scripted response in either endpoint's format.
type streamer struct {
	*fakeserver.Stream
	resp Response
	n    int // response number, for ids
	seq  int // responses API sequence_number
}

// doneMarker writes the chat terminator, after a fault scheduled past the
// last event.
func (st *streamer) doneMarker() {
	st.Due()
	st.Write("", "[DONE]")
}

func (st *streamer) nextSeq() int {
	st.seq++
	return st.seq - 1
}

func (st *streamer) chunkSize() int {
	if st.resp.ChunkSize > 0 {
		return st.resp.ChunkSize
	}
	return 8
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
