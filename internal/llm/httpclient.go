package llm

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Every provider sends its requests through the client HTTPClient returns,
// never one of its own: the key travels in a header (Authorization,
// X-Api-Key, X-Goog-Api-Key, [providers.NAME.headers]) and Go's client
// drops only Authorization and Cookie on a redirect to another host, so a
// base URL that answered `307 Location: http://elsewhere/` would otherwise
// hand the key to elsewhere, in clear text after an https base.
// httpclient_test.go fails when a provider package builds a client itself.

// ErrOtherOrigin ends a request redirected away from the base URL's origin.
var ErrOtherOrigin = errors.New("request URL origin must match the configured base URL")

// maxRedirects is how many redirects within the origin are followed.
const maxRedirects = 10

// HTTPClient returns a client that follows redirects only within the origin
// (scheme, host, effective port) of baseURL, so that a request carrying
// the key never reaches another server, and never goes from https to http.
// inner supplies the transport and timeout (nil: a client on
// http.DefaultTransport); its own CheckRedirect, if any, runs after the
// origin check. A baseURL that does not parse follows no redirect.
func HTTPClient(baseURL string, inner *http.Client) *http.Client {
	var c http.Client
	if inner != nil {
		c = *inner
	}
	origin, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || origin.Host == "" {
		origin = nil
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if origin == nil || !SameOrigin(req.URL, origin) {
			return ErrOtherOrigin
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// SameOrigin compares scheme, host and effective port.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// OtherOriginError words a request that the base URL redirected to another
// origin, and nil for any other error. It is not retryable: the server
// will redirect again, and the key must not follow.
func OtherOriginError(provider, title, baseURL string, err error) *Error {
	if !errors.Is(err, ErrOtherOrigin) {
		return nil
	}
	target := "another server"
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			target = u.Scheme + "://" + u.Host
		}
	}
	return &Error{Provider: provider, Message: fmt.Sprintf(
		"%s at %s redirected the request to %s: %v, so the key was not sent there; if you trust that server, make it the base URL.",
		title, baseURL, target, ErrOtherOrigin)}
}
