package llm

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestScrubErrorRemovesTheKeyAndEveryConfiguredHeaderValue: a gateway's
// 401 that quotes the request headers loses the key, the header values and
// the token of a "Bearer …" value, and keeps status and retry hint.
func TestScrubErrorRemovesTheKeyAndEveryConfiguredHeaderValue(t *testing.T) {
	cfg := ProviderConfig{APIKey: "sk-key-123", Headers: map[string]string{
		"x-gateway-token": "gw-SECRET-0123456789", "Authorization": "Bearer tok-ABCDEFGHIJ", "X-Team": "infra"}}
	in := &Error{Provider: "p", Status: 401, Retryable: true,
		Message: "unauthorized: x-api-key=sk-key-123 x-gateway-token=gw-SECRET-0123456789 authorization=Bearer tok-ABCDEFGHIJ token tok-ABCDEFGHIJ team infra"}
	err := ScrubError(RetryAfterHint(in, 3*time.Second), cfg.Secrets())
	msg := err.Error()
	for _, leak := range []string{"sk-key-123", "gw-SECRET", "tok-ABCDEFGHIJ"} {
		if strings.Contains(msg, leak) {
			t.Errorf("scrubbed error still holds %q: %s", leak, msg)
		}
	}
	if !strings.Contains(msg, "team infra") {
		t.Errorf("a short, ordinary header value was redacted: %s", msg)
	}
	var e *Error
	var hint RetryAfterError
	if !errors.As(err, &e) || e.Status != 401 || !e.Retryable || !errors.As(err, &hint) || hint.RetryAfter() != 3*time.Second {
		t.Errorf("scrubbing lost the error's kind: %#v", err)
	}
	plain := ScrubError(errors.New("Post http://x/?key=sk-key-123: refused"), cfg.Secrets())
	if strings.Contains(plain.Error(), "sk-key-123") {
		t.Errorf("plain error kept the key: %v", plain)
	}
	if clean := errors.New("nothing secret"); ScrubError(clean, cfg.Secrets()) != clean {
		t.Error("an error without secrets was rebuilt")
	}
}

// TestScrubLoggerRemovesSecretsFromEveryValue: message, strings, errors,
// groups and attributes bound with With lose the secret.
func TestScrubLoggerRemovesSecretsFromEveryValue(t *testing.T) {
	var b strings.Builder
	l := ScrubLogger(slog.New(slog.NewTextHandler(&b, nil)), []string{"tok-SECRET-123"})
	l.With("bound", "x tok-SECRET-123").Warn("refused tok-SECRET-123", "error", errors.New("401: Bearer tok-SECRET-123"),
		"text", "tok-SECRET-123", slog.Group("g", "inner", "tok-SECRET-123"), "n", 3)
	if out := b.String(); strings.Contains(out, "tok-SECRET") || !strings.Contains(out, "n=3") || strings.Count(out, "[redacted]") != 5 {
		t.Errorf("log line: %s", out)
	}
}
