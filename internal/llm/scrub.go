package llm

import (
	"errors"
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
