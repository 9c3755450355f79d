// Package openai is corvid's provider for OpenAI and for every server that
// speaks OpenAI's wire format, spoken directly over net/http and
// encoding/json like the Gemini provider.
//
// Two protocols are spoken, chosen per provider by config.Provider.API:
//
//   - the Responses API (config.APIResponses) for OpenAI's own models:
//     responses.go;
//   - Chat Completions (config.APIChat) for compatible servers: OpenRouter,
//     Groq, DeepSeek, Mistral, xAI, Together, Fireworks, Cerebras, and the
//     keyless local servers Ollama, LM Studio, llama.cpp and vLLM: chat.go.
//
// Register adds a factory for every such provider in config.Providers;
// RegisterCustom adds the [custom.NAME] providers of config.toml. Each
// factory takes its key and base URL from llm.ProviderConfig and nothing
// else: nothing here reads the process environment (OPENAI_API_KEY,
// OPENAI_BASE_URL, OPENAI_ORG_ID), so a request to OpenRouter can never
// carry an OpenAI key, and there are no hidden retries (llm.WithRetry owns
// them). Errors become *llm.Error (errors.go); an attempt whose server goes
// silent for the idle timeout ends with a retryable one (idle.go).
//
// The wire types are in wire.go, the SSE framing in stream.go and package
// sse. The official SDK, github.com/openai/openai-go, is a test-only
// oracle: oracle_test.go decodes corvid's request bodies with its parameter
// types, oracle_stream_test.go reads the recorded streams of test/recorded
// with its decoder and accumulator; golden_test.go and answers_test.go pin
// what the SDK-based provider sent and how it read 115 server answers. The
// binary does not link the SDK (internal/deps_test.go).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
)

// Register adds every built-in provider of config.Providers that speaks an
// OpenAI protocol to r.
func Register(r *llm.Registry) {
	for _, p := range config.Providers {
		if p.API == config.APIChat || p.API == config.APIResponses {
			r.Register(p.Name, Factory(p))
		}
	}
}

// RegisterCustom registers a provider defined in config.toml (see
// config.File.Provider) with llm.Default, so llm.Open can build it. p.API
// must be config.APIChat or config.APIResponses.
func RegisterCustom(p config.Provider) error {
	if p.API != config.APIChat && p.API != config.APIResponses {
		return fmt.Errorf("provider %s: api %q is not an OpenAI protocol", p.Name, p.API)
	}
	llm.Default.Register(p.Name, Factory(p))
	return nil
}

// Factory builds models of provider p. The caller's ProviderConfig supplies
// the key and, when set, the base URL; otherwise p.BaseURL is used.
func Factory(p config.Provider) llm.Factory {
	return func(cfg llm.ProviderConfig) (llm.Model, error) {
		return newModel(p, cfg, nil)
	}
}

// New builds a model of provider p talking through client (nil: a default
// client). Tests use it to inject transports.
func New(p config.Provider, cfg llm.ProviderConfig, client *http.Client) (llm.Model, error) {
	return newModel(p, cfg, client)
}

// model is one configured model. It is safe for concurrent use: every
// Stream builds its own request.
type model struct {
	p        config.Provider
	cfg      llm.ProviderConfig
	baseURL  string
	official bool // api.openai.com: max_completion_tokens, reasoning_effort, developer role
	client   *http.Client
	base     *url.URL // baseURL parsed, its path ending in "/"
	baseErr  error    // why baseURL does not parse
}

func newModel(p config.Provider, cfg llm.ProviderConfig, client *http.Client) (*model, error) {
	if cfg.Model == "" {
		return nil, &llm.Error{Provider: p.Name, Message: fmt.Sprintf("No model named for %s; write %s:MODEL.", p.DisplayName(), p.Name)}
	}
	base := strings.TrimSpace(cfg.BaseURL)
	if base == "" {
		base = p.BaseURL
	}
	if base == "" {
		return nil, &llm.Error{Provider: p.Name, Message: fmt.Sprintf("%s has no base URL; set %s.", p.DisplayName(), p.BaseURLVar)}
	}
	if p.NeedsKey && cfg.APIKey == "" {
		return nil, &llm.Error{Provider: p.Name, Message: fmt.Sprintf("%s needs an API key: set %s or run `corvid auth login %s`.", p.DisplayName(), strings.Join(p.KeyVars, " or "), p.Name)}
	}
	m := &model{
		p:        p,
		cfg:      cfg,
		baseURL:  base,
		official: (p.Name == "openai" || p.Shares == "openai") && strings.Contains(base, "api.openai.com"),
	}
	// Endpoints resolve against the base URL as a directory: .../v1 and
	// .../v1/ both give .../v1/chat/completions.
	m.base, m.baseErr = url.Parse(base)
	if m.baseErr == nil && m.base.Path != "" && !strings.HasSuffix(m.base.Path, "/") {
		m.base.Path += "/"
	}
	m.client = llm.HTTPClient(base, client)
	return m, nil
}

// send posts body to the endpoint (relative to the base URL) and returns
// the answer, its body counted as activity by watch. An answer with status
// 400 or more is returned as an error (already an *llm.Error, unless the
// attempt was cancelled or stalled while its body was read; see failure).
func (m *model) send(ctx context.Context, endpoint string, body any, watch *llm.IdleWatch) (*http.Response, error) {
	if m.baseErr != nil {
		return nil, fmt.Errorf("base URL %q does not parse: %w", m.baseURL, m.baseErr)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	u, err := m.base.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "corvid")
	if m.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
	}
	llm.SetContextHeaders(ctx, hreq.Header)
	m.cfg.SetHeaders(hreq.Header)
	res, err := watch.WatchResponse(m.client.Do(hreq))
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 400 {
		defer res.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		return nil, m.httpError(res.StatusCode, b, retryAfter(res.Header))
	}
	return res, nil
}

// failure is what an attempt that ended with err yields: ctx.Err() once
// the caller's context is done, the stall error when the idle watch ended
// it, else err as an *llm.Error.
func (m *model) failure(ctx context.Context, watch *llm.IdleWatch, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case watch.Fired():
		return m.errStalled()
	}
	return m.wrap(ctx, err)
}

// Info describes the model: what the caller's catalog knows, else defaults.
func (m *model) Info() llm.ModelInfo {
	info := m.cfg.Info
	if info.ID == "" {
		info.ID = m.p.Name + ":" + m.cfg.Model
	}
	return info
}

// Stream runs one request over the provider's protocol.
func (m *model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	if req.Model == "" {
		req.Model = m.cfg.Model
	}
	if m.p.API == config.APIResponses {
		return m.streamResponses(ctx, req)
	}
	return m.streamChat(ctx, req)
}

// schema decodes a tool's JSON Schema, defaulting to an empty
// object schema.
func schema(raw json.RawMessage) map[string]any {
	var s map[string]any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &s)
	}
	if s == nil {
		s = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}

// toolInput turns streamed arguments into the tool's input. Empty becomes
// {}; text that is not JSON is kept as a JSON string, so the tool rejects it
// with a message the model can act on instead of the stream failing.
func toolInput(args string) json.RawMessage {
	args = strings.TrimSpace(args)
	if args == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// toolResultText is the text a tool result carries to the model.
func toolResultText(p llm.Part) string {
	if p.IsError && p.Text != "" {
		return "Error: " + p.Text
	}
	if p.Text == "" {
		return "(no output)"
	}
	return p.Text
}

// effort maps a thinking budget to OpenAI's reasoning effort. The bounds
// are the budgets of corvid's thought levels (low 2048, medium 8192, high
// 16384, max 32000), so each level names its own effort.
func effort(budget int) string {
	switch {
	case budget <= 0:
		return ""
	case budget <= 2048:
		return "low"
	case budget <= 8192:
		return "medium"
	default:
		return "high"
	}
}
