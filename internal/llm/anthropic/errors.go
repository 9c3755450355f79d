package anthropic

import (
	"crypto/tls"
	"crypto/x509"
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
)

// Error messages follow llm's convention "summary: detail", so that
// llm.WithRetry can say "<summary> after N attempts; retry later".

// maxErrorBody bounds how much of an HTTP error answer is read.
const maxErrorBody = 1 << 20

// classify turns a failure of the connection (sending the request or
// reading the stream) into an *llm.Error. Context errors are handled by
// the caller.
func classify(err error, baseURL string) error {
	if e := llm.OtherOriginError("anthropic", "Anthropic", baseURL, err); e != nil {
		return e
	}
	// A refused connection, an unknown
	// host or a certificate the client rejects will not change in a few
	// seconds: say so at once. Anything else (reset, cut mid-body, a
	// malformed event) is worth another attempt; its cause stays in the
	// summary so that "after N attempts" still names it.
	if cause := permanentCause(err); cause != "" {
		return &llm.Error{Provider: "anthropic",
			Message: fmt.Sprintf("Anthropic is not reachable at %s (%s).", baseURL, cause)}
	}
	return &llm.Error{Provider: "anthropic", Retryable: true,
		Message: fmt.Sprintf("Anthropic connection failed (%s): %s", transientCause(err), err.Error())}
}

// permanentCause names a connection failure that retrying will not fix,
// or returns "".
func permanentCause(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "unknown host " + dnsErr.Name
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return "TLS certificate not accepted"
	}
	return ""
}

// transientCause names a connection failure worth retrying, in a few words.
func transientCause(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed early"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.As(err, new(*net.DNSError)):
		return "DNS lookup failed"
	case errors.As(err, new(*net.OpError)):
		return "network error"
	}
	return "bad response"
}

// statusOfType is the HTTP status the API uses for an error type; an error
// event inside a 200 stream has no status of its own.
var statusOfType = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// httpError turns an answer with an HTTP error status into an *llm.Error,
// from the API's error body ({"type": "error", "error": {"type",
// "message"}}) when it has one, else from the status alone.
func httpError(res *http.Response, baseURL string) error {
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	if err != nil {
		return classify(err, baseURL)
	}
	var body struct {
		Error apiErrorBody `json:"error"`
	}
	// Malformed JSON (a proxy's page) leaves body empty; a field of an
	// unexpected type is left out and the rest kept.
	_ = json.Unmarshal(raw, &body)
	return apiError(res.StatusCode, body.Error, res.Header)
}

// apiError is the error of an error answer (status >= 400) or of an error
// event inside a 200 stream, with the server's retry-after hint if any.
func apiError(status int, e apiErrorBody, header http.Header) error {
	typ := e.Type
	msg := strings.TrimSpace(e.Message)
	midStream := status == http.StatusOK // an `event: error` inside the stream
	if midStream {
		status = statusOfType[typ]
	}
	if typ == "" {
		typ = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	out := &llm.Error{
		Provider:  "anthropic",
		Status:    status,
		Retryable: status == 429 || status >= 500,
	}
	switch {
	case midStream:
		out.Message = fmt.Sprintf("Anthropic stream failed with %s: %s", typ, msg)
	case status == 401 || status == 403:
		out.Message = fmt.Sprintf("Anthropic returned %d %s: %s (check the API key: ANTHROPIC_API_KEY or `corvid auth login`)", status, typ, msg)
	default:
		out.Message = fmt.Sprintf("Anthropic returned %d %s: %s", status, typ, msg)
	}
	if d := retryAfter(header, time.Now()); d > 0 {
		return llm.RetryAfterHint(out, d)
	}
	return out
}

// retryAfter reads the server's hint: retry-after-ms (milliseconds), or
// retry-after in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

func stallError(idle time.Duration) *llm.Error {
	return &llm.Error{Provider: "anthropic", Retryable: true,
		Message: fmt.Sprintf("Anthropic stream stalled: no data for %s", idle)}
}

// scrub makes sure neither the API key nor a configured header value
// appears in error text, whatever a server or a transport put there.
func (m *model) scrub(err error) error { return llm.ScrubError(err, m.cfg.Secrets()) }
