package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
)

// maxErrorBody bounds how much of an HTTP error answer is read.
const maxErrorBody = 64 << 10

// retryAfter reads retry-after-ms or retry-after (seconds or an HTTP date).
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// apiError is the error object of an OpenAI-style error body. code is
// sometimes a number (OpenRouter), sometimes a string.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	// Metadata is OpenRouter's: the upstream provider's name and its raw
	// error (often that provider's JSON error body, as a string).
	Metadata struct {
		ProviderName string          `json:"provider_name"`
		Raw          json.RawMessage `json:"raw"`
	} `json:"metadata"`
}

// upstream is what error.metadata says the upstream provider answered, as
// "Provider: message", or "".
func (e apiError) upstream() string {
	raw := e.Metadata.Raw
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	msg := strings.TrimSpace(string(raw))
	if len(raw) > 0 && (raw[0] == '{' || raw[0] == '"') {
		// A JSON error body: the first message it has, at any usual place.
		if _, m := parseErrorBody(raw); m != "" {
			msg = m
		}
	}
	if msg == "null" || strings.HasPrefix(msg, "<") {
		msg = ""
	}
	switch {
	case msg == "" && e.Metadata.ProviderName == "":
		return ""
	case msg == "":
		return e.Metadata.ProviderName
	case e.Metadata.ProviderName == "":
		return msg
	}
	return e.Metadata.ProviderName + ": " + msg
}

func (e apiError) code() string {
	var s string
	if json.Unmarshal(e.Code, &s) == nil && s != "" {
		return s
	}
	var n json.Number
	if json.Unmarshal(e.Code, &n) == nil && n != "" {
		return n.String()
	}
	return e.Type
}

// parseErrorBody extracts code and message from {"error": {...}},
// {"error": "text"}, {"message": ...} or plain text.
func parseErrorBody(body []byte) (code, msg string) {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &env) == nil {
		var e apiError
		if len(env.Error) > 0 && json.Unmarshal(env.Error, &e) == nil && (e.Message != "" || len(e.Code) > 0 || e.Type != "") {
			msg := e.Message
			if up := e.upstream(); up != "" {
				msg = strings.TrimRight(msg, ". ") + " (" + up + ")"
			}
			return e.code(), msg
		}
		var s string
		if len(env.Error) > 0 && json.Unmarshal(env.Error, &s) == nil {
			return "", s
		}
		if env.Message != "" {
			return "", env.Message
		}
	}
	text := strings.TrimSpace(string(body))
	if strings.HasPrefix(text, "<") { // an HTML error page says nothing useful
		return "", ""
	}
	return "", text
}

// retryableCode says whether an error code names a transient condition.
func retryableCode(code string) bool {
	c := strings.ToLower(code)
	for _, s := range []string{"rate_limit", "overloaded", "server_error", "timeout", "unavailable", "capacity", "429", "500", "502", "503", "504", "529"} {
		if strings.Contains(c, s) {
			return true
		}
	}
	return false
}

// message builds the one-sentence message: "<Title> returned <status>
// <code>: <text>", with the key (if any) redacted and a hint for the
// failures a user fixes themselves.
func (m *model) message(status int, code, text string) string {
	var b strings.Builder
	b.WriteString(m.p.DisplayName())
	if status > 0 {
		fmt.Fprintf(&b, " returned %d", status)
	} else {
		b.WriteString(" reported an error")
	}
	if code == strconv.Itoa(status) {
		code = "" // OpenRouter's error.code is the status again
	}
	if code != "" {
		b.WriteString(" " + code)
	} else if status > 0 {
		b.WriteString(" " + strings.ToLower(http.StatusText(status)))
	}
	text = m.redact(strings.TrimSpace(text))
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	if text != "" {
		b.WriteString(": " + strings.TrimRight(text, "."))
	}
	switch {
	case status == 401 || status == 403:
		if len(m.p.KeyVars) > 0 {
			fmt.Fprintf(&b, "; check %s or run `corvid auth login %s`", m.p.KeyVars[0], m.p.Name)
		}
	case status == 404:
		fmt.Fprintf(&b, "; check the model id %q and the base URL %s", m.cfg.Model, m.baseURL)
	case status == 429:
		b.WriteString("; wait and retry, or check your plan's limits")
	}
	b.WriteString(".")
	return b.String()
}

// redact removes the API key and configured header values from text a
// server sent back.
func (m *model) redact(s string) string { return llm.Scrub(s, m.cfg.Secrets()) }

// httpError converts an HTTP error answer: its status, the start of its
// body and its retry-after hint.
func (m *model) httpError(status int, body []byte, after time.Duration) error {
	code, text := parseErrorBody(body)
	e := &llm.Error{
		Provider: m.p.Name,
		Status:   status,
		// OpenAI answers a spent quota with 429 too; waiting does not help.
		Retryable: code != "insufficient_quota" && (status == 408 || status == 409 || status == 429 || status >= 500 || retryableCode(code)),
		Message:   m.message(status, code, text),
	}
	if e.Retryable {
		return llm.RetryAfterHint(e, after)
	}
	return e
}

// streamError converts an error event inside a stream.
func (m *model) streamError(code, text string) error {
	status := 0
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n < 600 {
		status = n
	}
	return &llm.Error{
		Provider:  m.p.Name,
		Status:    status,
		Retryable: retryableCode(code) || status == 429 || status >= 500,
		Message:   m.message(status, code, text),
	}
}

// errorEvent converts a stream event whose data has a top-level "error"
// field (any value, null included): a Chat Completions error chunk, or the
// Responses API's error event.
func (m *model) errorEvent(data []byte) error {
	code, text := parseErrorBody(data)
	return m.streamError(code, text)
}

// hasError says whether an event's data has a top-level "error" field.
func hasError(data []byte) bool {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal(data, &env) == nil && env.Error != nil
}

// wrap converts any failure of a request or stream into what Stream yields:
// ctx.Err() once the context is done, else an *llm.Error.
func (m *model) wrap(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return err
	}
	if e := llm.OtherOriginError(m.p.Name, m.p.DisplayName(), m.baseURL, err); e != nil {
		return e
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return &llm.Error{Provider: m.p.Name, Retryable: true,
			Message: fmt.Sprintf("%s sent a malformed stream event; retry, and check the base URL %s if it persists.", m.p.DisplayName(), m.baseURL)}
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return &llm.Error{Provider: m.p.Name,
			Message: fmt.Sprintf("%s is not reachable at %s (connection refused); is the server running?", m.p.DisplayName(), m.baseURL)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		return errCut(m)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return &llm.Error{Provider: m.p.Name, Retryable: true,
			Message: fmt.Sprintf("%s could not be reached at %s: %s.", m.p.DisplayName(), m.baseURL, m.redact(netReason(err)))}
	}
	return &llm.Error{Provider: m.p.Name, Retryable: true,
		Message: fmt.Sprintf("%s request failed: %s.", m.p.DisplayName(), m.redact(err.Error()))}
}

// okErrorBody reads the start (up to maxErrorBody) of a 2xx answer whose
// Content-Type is JSON, not an event stream, and puts it back in front of
// the body. It returns that start when it mentions "error": OpenRouter
// answers an upstream failure so, with status 200, where a stream was due.
func okErrorBody(res *http.Response) []byte {
	if res.StatusCode >= 300 {
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "application/json" {
		return nil
	}
	head, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	res.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), res.Body), res.Body}
	if !bytes.Contains(head, []byte(`"error"`)) {
		return nil
	}
	return head
}

// cutError is the error of a stream that ended before its last event: the
// error of okBody, a JSON error body the server sent with a 2xx status
// instead of the stream, if it has one (with the code as the status, as in
// a stream's error event), else errCut.
func (m *model) cutError(okBody []byte) error {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(okBody, &env) == nil && len(env.Error) > 0 && string(env.Error) != "null" {
		return m.streamError(parseErrorBody(okBody))
	}
	return errCut(m)
}

// errCut is the error of a stream that ended before its last event.
func errCut(m *model) error {
	return &llm.Error{Provider: m.p.Name, Retryable: true,
		Message: fmt.Sprintf("%s closed the stream before the response was complete; retry.", m.p.DisplayName())}
}

// netReason is the innermost message of a network error, without the URL
// (which the message already names).
func netReason(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
