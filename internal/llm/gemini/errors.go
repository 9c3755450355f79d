package gemini

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/sse"
)

// maxErrorBody bounds how much of an HTTP error answer is read.
const maxErrorBody = 64 << 10

// httpError turns a non-2xx answer into an *llm.Error, annotated with the
// server's retry-after hint when it is retryable.
func (m *model) httpError(res *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	var body struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && body.Error != nil {
		// The Retry-After header, else the body's RetryInfo (what the
		// Gemini API sends with a 429).
		after := retryAfter(res.Header)
		if after <= 0 {
			after = body.Error.retryDelay()
		}
		return m.apiError(res.StatusCode, body.Error.Status, body.Error.Message, after)
	}
	// Not Google's error shape (a proxy, or the wrong base URL): one line
	// of plain text if there is one.
	text := strings.Join(strings.Fields(string(raw)), " ")
	if text == "" || strings.HasPrefix(text, "<") || json.Valid(raw) {
		text = http.StatusText(res.StatusCode)
	}
	return m.apiError(res.StatusCode, "", text, retryAfter(res.Header))
}

// apiError builds the error of an API failure: an HTTP error answer
// (status > 0) or an error chunk inside the stream (status is its code).
func (m *model) apiError(status int, code, text string, after time.Duration) error {
	e := &llm.Error{
		Provider:  "gemini",
		Status:    status,
		Retryable: status == 429 || status >= 500 || code == "RESOURCE_EXHAUSTED" || code == "UNAVAILABLE" || code == "INTERNAL",
		Message:   m.message(status, code, text),
	}
	if e.Retryable {
		return llm.RetryAfterHint(e, after)
	}
	return e
}

// requestError words a failure to send the request or get its headers.
func (m *model) requestError(err error) error {
	if e := llm.OtherOriginError("gemini", m.title, m.baseURL, err); e != nil {
		return e
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &llm.Error{Provider: "gemini", Message: fmt.Sprintf("%s is not reachable at %s (connection refused).", m.title, m.baseURL)}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return m.cut()
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return &llm.Error{Provider: "gemini", Retryable: true,
			Message: fmt.Sprintf("%s could not be reached at %s; check the network and retry.", m.title, m.baseURL)}
	}
	return &llm.Error{Provider: "gemini", Retryable: true, Message: m.title + " request failed: " + m.redact(err.Error()) + "."}
}

// readError words a failure while reading the event stream.
func (m *model) readError(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return &llm.Error{Provider: "gemini", Retryable: true,
			Message: fmt.Sprintf("%s sent a stream event larger than %d MiB.", m.title, sse.MaxEventBytes>>20)}
	}
	return m.cut() // io.ErrUnexpectedEOF, a reset, or any other broken read
}

func (m *model) malformed() error {
	return &llm.Error{Provider: "gemini", Retryable: true,
		Message: fmt.Sprintf("%s sent a malformed stream event; retry, and check the base URL %s if it persists.", m.title, m.baseURL)}
}

func (m *model) cut() error {
	return &llm.Error{Provider: "gemini", Retryable: true,
		Message: m.title + " closed the stream before the response was complete; retry."}
}

func (m *model) message(status int, code, text string) string {
	var b strings.Builder
	b.WriteString(m.title)
	if status > 0 {
		b.WriteString(" returned " + strconv.Itoa(status))
	} else {
		b.WriteString(" reported an error")
	}
	if code != "" {
		b.WriteString(" " + code)
	}
	text = strings.TrimSpace(m.redact(text))
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	if text != "" {
		b.WriteString(": " + strings.TrimRight(text, "."))
	}
	switch {
	case status == 401 || status == 403 || strings.Contains(strings.ToLower(text), "api key"):
		fmt.Fprintf(&b, "; check %s or run `corvid auth login gemini`", strings.Join(m.keyVars, " or "))
	case status == 404:
		fmt.Fprintf(&b, "; check the model id %q", m.cfg.Model)
	case status == 429:
		b.WriteString("; wait and retry, or check your quota")
	}
	b.WriteString(".")
	return b.String()
}

// redact removes the key and configured header values from text that came
// from elsewhere.
func (m *model) redact(s string) string { return llm.Scrub(s, m.cfg.Secrets()) }
