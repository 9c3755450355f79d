// Package openai is corvid's provider for OpenAI and for every server that
// speaks OpenAI's wire format. It is the only importer of
// github.com/openai/openai-go/v3.
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
// else: the SDK's client constructor, which reads OPENAI_API_KEY,
// OPENAI_BASE_URL, OPENAI_ORG_ID and more from the process environment, is
// never called; the services are built from explicit options only, so a
// request to OpenRouter can never carry an OpenAI key. Errors become
// *llm.Error (errors.go); an attempt whose server goes silent for the idle
// timeout ends with a retryable one (idle.go).
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

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
	chat     sdk.ChatCompletionService
	resp     responses.ResponseService
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
	if client == nil {
		client = &http.Client{}
	}
	// Only explicit options: no environment defaults (see the package doc).
	// Retries belong to llm.WithRetry, which knows what was already
	// streamed, so the SDK's own are off.
	opts := []option.RequestOption{
		option.WithHTTPClient(client),
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
	}
	m := &model{
		p:        p,
		cfg:      cfg,
		baseURL:  base,
		official: p.Name == "openai" && strings.Contains(base, "api.openai.com"),
		chat:     sdk.NewChatCompletionService(opts...),
		resp:     responses.NewResponseService(opts...),
	}
	return m, nil
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

// schema decodes a tool's JSON Schema for the SDK, defaulting to an empty
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
