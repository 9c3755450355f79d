// Package anthropic is corvid's Anthropic provider: an llm.Model on the
// official Go SDK (github.com/anthropics/anthropic-sdk-go/v2), registered as
// "anthropic". It is the only importer of that SDK.
//
// Start with New and (*model).Stream. The files split by concern:
// request.go turns an llm.Request into Messages API parameters, stream.go
// turns the SDK's stream events into llm.Events, errors.go turns failures
// into *llm.Error, and idle.go ends an attempt whose stream went quiet.
//
// Invariants:
//   - The SDK never reads the environment: the key and base URL come from
//     llm.ProviderConfig alone, and the SDK's own retries are off (retry
//     with llm.WithRetry, which knows whether anything was streamed yet).
//   - The key is sent in x-api-key only, and never appears in an error.
//   - A redacted_thinking block travels through corvid as a thinking part
//     with no text whose Signature is redactedPrefix + the block's data; it
//     is an opaque token echoed back like any signature.
package anthropic

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/corvid-agent/corvid/internal/llm"
)

// DefaultIdleTimeout is how long a stream may stay silent (no byte from the
// server, pings included) before the attempt fails with a retryable error,
// unless llm.ProviderConfig.IdleTimeout says otherwise. New reads it once,
// so set it before building a model.
var DefaultIdleTimeout = 60 * time.Second

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
	client anthropic.Client
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
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts,
			option.WithAPIKey(cfg.APIKey),
			// This SDK version sends the key as a bearer token; the Messages
			// API's documented header for API keys is x-api-key, so send it
			// there and only there.
			option.WithHeaderDel("Authorization"),
			option.WithHeader("X-Api-Key", cfg.APIKey),
		)
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
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
		client: anthropic.NewClient(opts...),
		cfg:    cfg,
		info:   info,
		idle:   idle,
	}, nil
}

func (m *model) Info() llm.ModelInfo { return m.info }

// baseURL is where requests go, for messages.
func (m *model) baseURL() string {
	if m.cfg.BaseURL != "" {
		return m.cfg.BaseURL
	}
	return "https://api.anthropic.com"
}

// Stream runs one Messages API call with stream:true. See the package doc
// for what it guarantees.
func (m *model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		attemptCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		watch := llm.NewIdleWatch(m.idle, cancel)
		defer watch.Stop()

		opts := []option.RequestOption{option.WithMiddleware(idleMiddleware(watch))}
		if req.ContextWindow > defaultContextWindow {
			// The 1M-token window is a beta the request must ask for.
			opts = append(opts, option.WithHeaderAdd("anthropic-beta", longContextBeta))
		}
		stream := m.client.Messages.NewStreaming(attemptCtx, params, opts...)
		defer stream.Close()

		var tr translator
		for stream.Next() {
			watch.Kick()
			for _, ev := range tr.translate(stream.Current()) {
				if !yield(ev, nil) {
					return
				}
			}
			if tr.err != nil {
				yield(llm.Event{}, m.scrub(tr.err))
				return
			}
			if tr.done {
				return
			}
		}
		switch err := stream.Err(); {
		case ctx.Err() != nil:
			yield(llm.Event{}, ctx.Err())
		case watch.Fired():
			yield(llm.Event{}, stallError(m.idle))
		case err != nil:
			yield(llm.Event{}, m.scrub(classify(err, m.baseURL())))
		default:
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
}
