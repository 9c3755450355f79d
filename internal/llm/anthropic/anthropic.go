// Package anthropic is corvid's Anthropic provider: an llm.Model that
// speaks the Messages API (POST /v1/messages, stream:true) directly over
// net/http and encoding/json, registered as "anthropic".
//
// It does not link the official Go SDK (github.com/anthropics/anthropic-sdk-go):
// that SDK was about half of the binary and a large share of the idle
// memory and start-up of corvid, for one request shape. The SDK stays a
// test-only oracle: the tests compare every request body with the one its
// parameter types build and read the recorded streams with its
// accumulator as well (oracle_*_test.go).
//
// Start with New and (*model).Stream. The files split by concern: wire.go
// holds the JSON shapes, request.go turns an llm.Request into a request
// body, stream.go turns stream events into llm.Events (the SSE framing is
// package sse), and errors.go turns failures into *llm.Error.
//
// Invariants:
//   - Nothing reads the environment: the key and base URL come from
//     llm.ProviderConfig alone, and there are no hidden retries (retry
//     with llm.WithRetry, which knows whether anything was streamed yet).
//   - The key is sent in x-api-key only, and never appears in an error.
//   - An attempt whose server sends nothing (pings included) for the idle
//     timeout ends with a retryable error.
//   - A redacted_thinking block travels through corvid as a thinking part
//     with no text whose Signature is redactedPrefix + the block's data; it
//     is an opaque token echoed back like any signature.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/sse"
)

// DefaultIdleTimeout is how long a stream may stay silent (no byte from the
// server, pings included) before the attempt fails with a retryable error,
// unless llm.ProviderConfig.IdleTimeout says otherwise. New reads it once,
// so set it before building a model.
var DefaultIdleTimeout = 60 * time.Second

// defaultBaseURL is the Messages API's address.
const defaultBaseURL = "https://api.anthropic.com"

// apiVersion is the anthropic-version header: the version of the Messages
// API whose shapes wire.go holds (the one the SDK corvid used to link,
// v2.15.0, sent).
const apiVersion = "2026-10-21"

// longContextBeta is the anthropic-beta value that opens the 1M-token
// context window.
const longContextBeta = "context-1m-2025-08-07"

// Defaults for ModelInfo fields the catalog left at zero.
const (
	defaultContextWindow = 200_000
	defaultMaxOutput     = 32_000
)

// Register adds the Anthropic provider to r.
func Register(r *llm.Registry) {
	r.Register("anthropic", New)
}

type model struct {
	client *http.Client
	cfg    llm.ProviderConfig
	info   llm.ModelInfo
	idle   time.Duration
}

// New builds an Anthropic model from cfg. It does no I/O: a wrong key or an
// unreachable base URL shows up as the first Stream's error.
func New(cfg llm.ProviderConfig) (llm.Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("anthropic: no model id given")
	}
	info := cfg.Info
	if info.ID == "" {
		info.ID = "anthropic:" + cfg.Model
	}
	if info.ContextWindow == 0 && info.MaxOutput == 0 {
		// The catalog knows nothing of this model: assume a current Claude.
		// (A known model's false Images or Reasoning is meant, so kept.)
		info.Images, info.Reasoning = true, true
	}
	if info.ContextWindow == 0 {
		info.ContextWindow = defaultContextWindow
	}
	if info.MaxOutput == 0 {
		info.MaxOutput = defaultMaxOutput
	}
	idle := DefaultIdleTimeout
	if cfg.IdleTimeout > 0 {
		idle = cfg.IdleTimeout
	}
	return &model{
		client: llm.HTTPClient(baseURLOf(cfg), nil),
		cfg:    cfg,
		info:   info,
		idle:   idle,
	}, nil
}

func (m *model) Info() llm.ModelInfo { return m.info }

// baseURL is where requests go, for messages.
func (m *model) baseURL() string { return baseURLOf(m.cfg) }

func baseURLOf(cfg llm.ProviderConfig) string {
	if cfg.BaseURL != "" {
		return cfg.BaseURL
	}
	return defaultBaseURL
}

// endpoint is the messages URL: v1/messages under the base URL's path.
func (m *model) endpoint() (string, error) {
	u, err := url.Parse(m.baseURL())
	if err != nil {
		return "", err
	}
	if u.Path != "" && !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u.ResolveReference(&url.URL{Path: "v1/messages"}).String(), nil
}

// Stream runs one Messages API call with stream:true. See the package doc
// for what it guarantees.
func (m *model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, err := m.body(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		attemptCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		watch := llm.NewIdleWatch(m.idle, cancel)
		defer watch.Stop()

		// fail yields what ended the attempt: the caller's cancellation
		// and the idle watch take precedence over the error they caused.
		fail := func(err error) {
			switch {
			case ctx.Err() != nil:
				yield(llm.Event{}, ctx.Err())
			case watch.Fired():
				yield(llm.Event{}, stallError(m.idle))
			default:
				yield(llm.Event{}, m.scrub(err))
			}
		}

		// The 1M-token window is a beta the request must ask for.
		res, err := m.send(attemptCtx, body, req.ContextWindow > defaultContextWindow)
		if err != nil {
			fail(err)
			return
		}
		res.Body = watch.WatchBody(res.Body)
		defer res.Body.Close()
		watch.Kick() // the headers are activity
		if res.StatusCode >= 400 {
			fail(httpError(res, m.baseURL()))
			return
		}

		events := sse.NewReader(res.Body)
		var tr translator
		for {
			data, complete, err := events.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, sse.ErrNotSSE) || err == nil && !complete {
				// A line that is no SSE field, and an event the end of the
				// body cut short, are skipped, as the SDK corvid used to
				// link skipped them.
				continue
			}
			if err != nil {
				fail(classify(err, m.baseURL()))
				return
			}
			if len(bytes.TrimSpace(data)) == 0 {
				continue
			}
			var ev streamEvent
			if err := decodeEvent(data, &ev); err != nil {
				fail(classify(err, m.baseURL()))
				return
			}
			if ev.Type == "error" {
				fail(apiError(res.StatusCode, ev.Error, res.Header))
				return
			}
			watch.Kick()
			if evs := tr.translate(&ev); len(evs) > 0 {
				watch.Pause()
				for _, e := range evs {
					if !yield(e, nil) {
						return
					}
				}
				watch.Resume()
			}
			if tr.err != nil {
				yield(llm.Event{}, m.scrub(tr.err))
				return
			}
			if tr.done {
				return
			}
		}
		watch.Stop()
		if ctx.Err() != nil || watch.Fired() {
			fail(nil)
			return
		}
		// The body ended cleanly. A stream that told us why it stopped is
		// complete even without message_stop; anything else was cut.
		if ev, ok := tr.finish(); ok {
			yield(ev, nil)
			return
		}
		yield(llm.Event{}, m.scrub(&llm.Error{Provider: "anthropic", Retryable: true,
			Message: "Anthropic stream ended early: the connection closed before the response was complete"}))
	}
}

// send posts body and returns the answer once its headers are in; its
// error is the transport's.
func (m *model) send(ctx context.Context, body *messagesRequest, longContext bool) (*http.Response, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, &llm.Error{Provider: "anthropic", Message: "Anthropic request could not be encoded: " + err.Error()}
	}
	endpoint, err := m.endpoint()
	if err != nil {
		return nil, &llm.Error{Provider: "anthropic",
			Message: fmt.Sprintf("Anthropic base URL %q is not usable: %v; check ANTHROPIC_BASE_URL", m.baseURL(), err)}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(raw))
	if err != nil {
		return nil, &llm.Error{Provider: "anthropic",
			Message: fmt.Sprintf("Anthropic base URL %q is not usable: %v; check ANTHROPIC_BASE_URL", m.baseURL(), err)}
	}
	h := hreq.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "corvid")
	h.Set("Anthropic-Version", apiVersion)
	if m.cfg.APIKey != "" {
		h.Set("X-Api-Key", m.cfg.APIKey)
	}
	if longContext {
		h.Add("Anthropic-Beta", longContextBeta)
	}
	llm.SetContextHeaders(hreq.Context(), h)
	m.cfg.SetHeaders(h)
	res, err := m.client.Do(hreq)
	if err != nil {
		return nil, classify(err, m.baseURL())
	}
	return res, nil
}
