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
	"net/http"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit/fakeserver"
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

// Server is a fake Gemini API; its methods, from fakeserver, are safe for
// concurrent use. URL() is to be used as GEMINI_BASE_URL. Each request
// takes the first response Enqueue queued; a request that finds the queue
// empty fails the test and gets a 400. After RequireAPIKey, a request whose
// key is another gets a 400 INVALID_ARGUMENT (as Gemini answers) and takes
// no response.
type Server struct {
	*fakeserver.Server[Request, Response]
}

// New starts a server that is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	return &Server{fakeserver.New[Request, Response](t, "fakegemini", wire{})}
}

// wire is the Gemini API's side of fakeserver.Server.
type wire struct{}

func (wire) Record(r *http.Request, body []byte) Request {
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: body}
	_ = json.Unmarshal(body, &rec.Body)
	return rec
}

func (wire) APIKey(rec Request) string { return rec.APIKey() }

func (wire) Routed(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":streamGenerateContent") && r.URL.Query().Get("alt") == "sse"
}

func (wire) Refuse(w http.ResponseWriter, r *http.Request, why fakeserver.Refusal) {
	switch why {
	case fakeserver.NotRouted:
		writeError(w, Fault{Status: 404, StatusText: "NOT_FOUND", Message: "no route " + r.Method + " " + r.URL.String()})
	case fakeserver.WrongKey:
		writeError(w, HTTPError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."))
	default:
		writeError(w, HTTPError(400, "INVALID_ARGUMENT", "fakegemini: no scripted response left"))
	}
}

func (wire) Fault(resp Response) fakeserver.Fault {
	f := resp.Fault
	return fakeserver.Fault{Kind: f.Kind, RetryAfter: f.RetryAfter, AfterEvents: f.AfterEvents, Stall: f.Stall}
}

func (wire) WriteError(w http.ResponseWriter, resp Response) { writeError(w, resp.Fault) }

// Answer streams one GenerateContentResponse chunk per piece of each block,
// then a last chunk with the finish reason and usage. The headers wait for
// the first chunk.
func (wire) Answer(w http.ResponseWriter, _ *http.Request, rec Request, resp Response, _ int, stream *fakeserver.Stream) {
	stream.HoldHeaders()
	w.Header().Set("Content-Type", "text/event-stream")
	stream.EventDelay = resp.EventDelay
	stream.LineEnd = "\r\n"
	stream.ErrorEvent = func() (string, any) { return "", errorBody(resp.Fault) }
	st := &streamer{Stream: stream, model: rec.Model()}
	n := resp.ChunkSize
	if n <= 0 {
		n = 8
	}
	for _, b := range resp.Blocks {
		switch b.Kind {
		case KindText, KindThought:
			for i, p := range fakeserver.Pieces(b.Text, n) {
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
	finish := resp.FinishReason
	if finish == "" {
		finish = "STOP"
	}
	if finish == "-" {
		finish = ""
	}
	u := resp.Usage
	st.chunk(nil, finish, map[string]any{
		"promptTokenCount":        u.PromptTokens,
		"candidatesTokenCount":    u.CandidatesTokens,
		"cachedContentTokenCount": u.CachedTokens,
		"thoughtsTokenCount":      u.ThoughtsTokens,
		"totalTokenCount":         u.PromptTokens + u.CandidatesTokens + u.ThoughtsTokens,
	})
	st.Due()
}

func writeError(w http.ResponseWriter, f Fault) { fakeserver.WriteJSON(w, f.Status, errorBody(f)) }

func errorBody(f Fault) map[string]any {
	return map[string]any{"error": map[string]any{"code": f.Status, "message": f.Message, "status": f.StatusText}}
}

type streamer struct {
	*fakeserver.Stream
	model string
}

// chunk writes one GenerateContentResponse with one part (or none).
func (st *streamer) chunk(part map[string]any, finish string, usage map[string]any) {
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
	st.Event("", body)
}
