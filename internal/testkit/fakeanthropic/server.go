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
	"net/http"
	"strconv"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit/fakeserver"
)

// Server is a fake Anthropic API; its methods, from fakeserver, are safe
// for concurrent use. URL() is to be used as ANTHROPIC_BASE_URL: requests go
// to URL()+"/v1/messages". Each takes the first response Enqueue queued; a
// request that finds the queue empty fails the test and gets a 400
// invalid_request_error. After RequireAPIKey, a request whose x-api-key is
// another gets a 401 authentication_error and takes no response.
type Server struct {
	*fakeserver.Server[Request, Response]
}

// New starts a server that is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	return &Server{fakeserver.New[Request, Response](t, "fakeanthropic", wire{})}
}

// wire is the Messages API's side of fakeserver.Server.
type wire struct{}

func (wire) Record(r *http.Request, body []byte) Request {
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: body}
	_ = json.Unmarshal(body, &rec.Body)
	return rec
}

func (wire) APIKey(rec Request) string { return rec.APIKey() }

func (wire) Routed(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/v1/messages"
}

func (wire) Refuse(w http.ResponseWriter, _ *http.Request, why fakeserver.Refusal) {
	switch why {
	case fakeserver.NotRouted:
		writeHTTPError(w, HTTPError(http.StatusNotFound, "not_found_error", "fakeanthropic serves only POST /v1/messages"))
	case fakeserver.WrongKey:
		writeHTTPError(w, HTTPError(http.StatusUnauthorized, "authentication_error", "invalid x-api-key"))
	default:
		writeHTTPError(w, HTTPError(http.StatusBadRequest, "invalid_request_error", "fakeanthropic: no scripted response left"))
	}
}

func (wire) Fault(resp Response) fakeserver.Fault {
	f := resp.Fault
	return fakeserver.Fault{Kind: f.Kind, RetryAfter: f.RetryAfter, AfterEvents: f.AfterEvents, Stall: f.Stall}
}

func (wire) WriteError(w http.ResponseWriter, resp Response) { writeHTTPError(w, resp.Fault) }

func (wire) Answer(w http.ResponseWriter, _ *http.Request, rec Request, resp Response, n int, st *fakeserver.Stream) {
	if resp.MessageID == "" {
		resp.MessageID = "msg_fake_" + strconv.Itoa(n)
	}
	if resp.StopReason == "" {
		resp.StopReason = defaultStopReason(resp.Blocks)
	}
	if !rec.Body.Stream {
		writeJSON(w, http.StatusOK, messageJSON(resp, rec.Body.Model))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Request-Id", "req_fake")
	st.ErrorEvent = func() (string, any) { return "error", errorBody(resp.Fault) }
	streamMessage(st, resp, rec.Body.Model)
}

func defaultStopReason(blocks []Block) string {
	for _, b := range blocks {
		if b.Kind == KindToolUse {
			return "tool_use"
		}
	}
	return "end_turn"
}

// writeHTTPError answers as the API does on failure: a JSON error body and
// a request-id header (fakeserver sets retry-after).
func writeHTTPError(w http.ResponseWriter, f Fault) {
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
