package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// A server's error answer may quote the request it got, headers included
// (a gateway's 401 often does), and a transport error may quote a URL.
// Whatever a provider puts in an error passes through ScrubError first,
// with every secret of its ProviderConfig: the key and the values of the
// configured headers.

// redactedMark replaces a secret in provider error text.
const redactedMark = "[redacted]"

// minKeyLen and minHeaderSecretLen keep toy values from redacting ordinary
// words: a key is always secret; a header value counts from 8 characters
// ("X-Team: infra" is not a secret; a gateway token is longer).
const (
	minKeyLen          = 4
	minHeaderSecretLen = 8
)

// Secrets are the values of cfg that must appear in no error text or log:
// the API key and each configured header value, and for a value with an
// auth scheme ("Bearer TOKEN") the token alone too.
func (cfg ProviderConfig) Secrets() []string {
	var out []string
	if len(cfg.APIKey) >= minKeyLen {
		out = append(out, cfg.APIKey)
	}
	for _, v := range cfg.Headers {
		out = append(out, HeaderSecrets(v)...)
	}
	return out
}

// HeaderSecrets are the parts of a configured header value that are
// secrets: the value, and what follows an auth scheme ("Bearer x", "Basic
// x"), each from 8 characters.
func HeaderSecrets(v string) []string {
	var out []string
	v = strings.TrimSpace(v)
	if len(v) >= minHeaderSecretLen {
		out = append(out, v)
	}
	if _, token, ok := strings.Cut(v, " "); ok {
		if token = strings.TrimSpace(token); len(token) >= minHeaderSecretLen {
			out = append(out, token)
		}
	}
	return out
}

// Scrub replaces every secret in s with "[redacted]", longest first, so
// that a secret containing another goes whole.
func Scrub(s string, secrets []string) string {
	for _, k := range longestFirst(secrets) {
		s = strings.ReplaceAll(s, k, redactedMark)
	}
	return s
}

// ScrubError is err with every secret removed from its text. An *Error
// keeps its status, retryability and Retry-After hint; any other error
// becomes a plain one with the scrubbed text.
func ScrubError(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	if Scrub(text, secrets) == text {
		return err
	}
	var e *Error
	if errors.As(err, &e) {
		clean := *e
		clean.Message = Scrub(e.Message, secrets)
		var hint RetryAfterError
		if errors.As(err, &hint) {
			return RetryAfterHint(&clean, hint.RetryAfter())
		}
		return &clean
	}
	return errors.New(Scrub(text, secrets))
}

func longestFirst(secrets []string) []string {
	out := slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return s == "" })
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// ScrubLogger returns a logger that writes what l writes with every secret
// removed from the message and from string, error and Stringer values (in
// groups too): for code whose errors may quote a server's answer, such as
// an MCP server refusing a token.
func ScrubLogger(l *slog.Logger, secrets []string) *slog.Logger {
	secrets = longestFirst(secrets)
	if l == nil || len(secrets) == 0 {
		return l
	}
	return slog.New(scrubHandler{inner: l.Handler(), secrets: secrets})
}

type scrubHandler struct {
	inner   slog.Handler
	secrets []string
}

func (h scrubHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Scrub(r.Message, h.secrets), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return scrubHandler{inner: h.inner.WithAttrs(clean), secrets: h.secrets}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{inner: h.inner.WithGroup(name), secrets: h.secrets}
}

func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Scrub(v.String(), h.secrets))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = h.attr(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, Scrub(x.Error(), h.secrets))
		case fmt.Stringer:
			return slog.String(a.Key, Scrub(x.String(), h.secrets))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
