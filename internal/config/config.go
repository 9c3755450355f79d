// Package config resolves where corvid keeps things (XDG paths, CORVID_HOME)
// and which credentials and base URLs each provider uses. It is the only
// package that reads the environment; everything else is handed values.
//
// Start with Env (a snapshot of the environment, injectable in tests),
// Providers, Credential and BaseURL; then Load (config.toml layers),
// ResolveModel (which model to use) and Login/Logout/Status (credentials in
// the OS keyring or auth.json).
package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Env is a read-only view of the process environment. Tests pass a map.
type Env interface {
	Getenv(key string) string
}

// OSEnv reads the real environment.
type OSEnv struct{}

func (OSEnv) Getenv(key string) string { return os.Getenv(key) }

// MapEnv is an Env backed by a map.
type MapEnv map[string]string

func (m MapEnv) Getenv(key string) string { return m[key] }

// Provider describes how a provider is reached and authenticated.
type Provider struct {
	Name        string
	KeyVars     []string // environment variables holding the API key, in order
	BaseURLVar  string   // environment variable overriding the base URL
	BaseURL     string   // default base URL ("" = the SDK's own default)
	NeedsKey    bool
	Description string
	// Title is the name a user knows the provider by, used in messages
	// ("OpenRouter returned 429 ...").
	Title string
	// API is the wire protocol: APIAnthropic, APIGemini, APIResponses
	// (OpenAI Responses) or APIChat (OpenAI-compatible Chat Completions).
	API string
	// DefaultModel is used when only the provider is named ("-m openai"),
	// or when the provider is picked because it is the first with
	// credentials. Empty for local servers, whose models vary.
	DefaultModel string
	// Custom marks a provider defined in config.toml ([custom.NAME]).
	Custom bool
	// Aliases are other names -m and config accept for the provider
	// (corvid's own name where kage's id differs: fireworks for
	// fireworks-ai). Keys stored under an alias are found too.
	Aliases []string
	// Shares names the provider whose stored key and catalog entries this
	// one uses ("openai" for openai-responses, "xiaomi" for its token
	// plans); "" = its own.
	Shares string
	// Headers are extra HTTP headers sent with every request (from
	// [providers.NAME.headers] in config.toml).
	Headers map[string]string
}

// CatalogName is the provider whose catalog entries describe p's models.
func (p Provider) CatalogName() string {
	if p.Shares != "" {
		return p.Shares
	}
	return p.Name
}

// Wire protocols of Provider.API.
const (
	APIAnthropic = "anthropic"
	APIGemini    = "gemini"
	APIResponses = "responses"
	APIChat      = "chat"
)

// Providers lists the providers corvid knows, in the documented order used to
// pick a default when none is configured (see ResolveModel and
// docs/models.md): the first provider in this list whose credentials are at
// hand wins. Keyless local servers (NeedsKey false) are never picked
// implicitly: their presence says nothing about a server running.
var Providers = []Provider{
	{Name: "anthropic", Title: "Anthropic", API: APIAnthropic, KeyVars: []string{"ANTHROPIC_API_KEY"}, BaseURLVar: "ANTHROPIC_BASE_URL", NeedsKey: true, DefaultModel: "claude-sonnet-4-6", Description: "Anthropic Claude"},
	{Name: "openai", Title: "OpenAI", API: APIResponses, KeyVars: []string{"OPENAI_API_KEY"}, BaseURLVar: "OPENAI_BASE_URL", BaseURL: "https://api.openai.com/v1", NeedsKey: true, DefaultModel: "gpt-5", Description: "OpenAI (Responses API)"},
	{Name: "gemini", Title: "Gemini", API: APIGemini, KeyVars: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, BaseURLVar: "GEMINI_BASE_URL", BaseURL: "https://generativelanguage.googleapis.com/", NeedsKey: true, DefaultModel: "gemini-2.5-pro", Description: "Google Gemini API"},
	{Name: "openrouter", Title: "OpenRouter", API: APIChat, KeyVars: []string{"OPENROUTER_API_KEY"}, BaseURLVar: "OPENROUTER_BASE_URL", BaseURL: "https://openrouter.ai/api/v1", NeedsKey: true, DefaultModel: "anthropic/claude-sonnet-4.6", Description: "OpenRouter (OpenAI-compatible)"},
	{Name: "groq", Title: "Groq", API: APIChat, KeyVars: []string{"GROQ_API_KEY"}, BaseURLVar: "GROQ_BASE_URL", BaseURL: "https://api.groq.com/openai/v1", NeedsKey: true, DefaultModel: "openai/gpt-oss-120b", Description: "Groq (OpenAI-compatible)"},
	{Name: "deepseek", Title: "DeepSeek", API: APIChat, KeyVars: []string{"DEEPSEEK_API_KEY"}, BaseURLVar: "DEEPSEEK_BASE_URL", BaseURL: "https://api.deepseek.com/v1", NeedsKey: true, DefaultModel: "deepseek-chat", Description: "DeepSeek (OpenAI-compatible)"},
	{Name: "mistral", Title: "Mistral", API: APIChat, KeyVars: []string{"MISTRAL_API_KEY"}, BaseURLVar: "MISTRAL_BASE_URL", BaseURL: "https://api.mistral.ai/v1", NeedsKey: true, DefaultModel: "devstral-medium-latest", Description: "Mistral (OpenAI-compatible)"},
	{Name: "xai", Title: "xAI", API: APIChat, KeyVars: []string{"XAI_API_KEY"}, BaseURLVar: "XAI_BASE_URL", BaseURL: "https://api.x.ai/v1", NeedsKey: true, DefaultModel: "grok-code-fast-1", Description: "xAI Grok (OpenAI-compatible)"},
	{Name: "together", Title: "Together AI", API: APIChat, KeyVars: []string{"TOGETHER_API_KEY"}, BaseURLVar: "TOGETHER_BASE_URL", BaseURL: "https://api.together.xyz/v1", NeedsKey: true, DefaultModel: "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", Description: "Together AI (OpenAI-compatible)"},
	{Name: "fireworks-ai", Aliases: []string{"fireworks"}, Title: "Fireworks AI", API: APIChat, KeyVars: []string{"FIREWORKS_API_KEY"}, BaseURLVar: "FIREWORKS_BASE_URL", BaseURL: "https://api.fireworks.ai/inference/v1", NeedsKey: true, DefaultModel: "accounts/fireworks/models/kimi-k2-instruct-0905", Description: "Fireworks AI (OpenAI-compatible)"},
	// kage's provider ids (docs/kage.md): Z.AI, Moonshot, Kimi, Xiaomi, and
	// OpenAI through the Responses API under its own id.
	{Name: "zai", Title: "Z.AI", API: APIChat, KeyVars: []string{"ZAI_API_KEY"}, BaseURLVar: "ZAI_BASE_URL", BaseURL: "https://api.z.ai/api/paas/v4", NeedsKey: true, DefaultModel: "glm-4.6", Description: "Z.AI GLM (OpenAI-compatible)"},
	{Name: "zai-coding-plan", Title: "Z.AI Coding Plan", API: APIChat, KeyVars: []string{"ZAI_CODING_API_KEY"}, BaseURLVar: "ZAI_CODING_BASE_URL", BaseURL: "https://api.z.ai/api/coding/paas/v4", NeedsKey: true, DefaultModel: "glm-4.6", Description: "Z.AI GLM Coding Plan (OpenAI-compatible)"},
	{Name: "moonshotai", Aliases: []string{"moonshot"}, Title: "Moonshot", API: APIChat, KeyVars: []string{"MOONSHOT_API_KEY"}, BaseURLVar: "MOONSHOT_BASE_URL", BaseURL: "https://api.moonshot.ai/v1", NeedsKey: true, DefaultModel: "kimi-k2-0905-preview", Description: "Moonshot Kimi (OpenAI-compatible)"},
	{Name: "kimi-for-coding", Title: "Kimi for Coding", API: APIChat, KeyVars: []string{"KIMI_API_KEY"}, BaseURLVar: "KIMI_BASE_URL", BaseURL: "https://api.kimi.com/coding/v1", NeedsKey: true, DefaultModel: "kimi-for-coding", Description: "Kimi for Coding plan (OpenAI-compatible)"},
	{Name: "xiaomi", Title: "Xiaomi", API: APIChat, KeyVars: []string{"XIAOMI_API_KEY"}, BaseURLVar: "XIAOMI_BASE_URL", BaseURL: "https://api.xiaomimimo.com/v1", NeedsKey: true, DefaultModel: "mimo-v2-flash", Description: "Xiaomi MiMo (OpenAI-compatible)"},
	{Name: "xiaomi-token-plan-ams", Shares: "xiaomi", Title: "Xiaomi AMS plan", API: APIChat, KeyVars: []string{"XIAOMI_API_KEY"}, BaseURLVar: "XIAOMI_AMS_BASE_URL", BaseURL: "https://token-plan-ams.xiaomimimo.com/v1", NeedsKey: true, DefaultModel: "mimo-v2-flash", Description: "Xiaomi MiMo token plan, Amsterdam (OpenAI-compatible)"},
	{Name: "xiaomi-token-plan-cn", Shares: "xiaomi", Title: "Xiaomi CN plan", API: APIChat, KeyVars: []string{"XIAOMI_API_KEY"}, BaseURLVar: "XIAOMI_CN_BASE_URL", BaseURL: "https://token-plan-cn.xiaomimimo.com/v1", NeedsKey: true, DefaultModel: "mimo-v2-flash", Description: "Xiaomi MiMo token plan, China (OpenAI-compatible)"},
	{Name: "xiaomi-token-plan-sgp", Shares: "xiaomi", Title: "Xiaomi SGP plan", API: APIChat, KeyVars: []string{"XIAOMI_API_KEY"}, BaseURLVar: "XIAOMI_SGP_BASE_URL", BaseURL: "https://token-plan-sgp.xiaomimimo.com/v1", NeedsKey: true, DefaultModel: "mimo-v2-flash", Description: "Xiaomi MiMo token plan, Singapore (OpenAI-compatible)"},
	{Name: "openai-responses", Shares: "openai", Title: "OpenAI", API: APIResponses, KeyVars: []string{"OPENAI_API_KEY"}, BaseURLVar: "OPENAI_BASE_URL", BaseURL: "https://api.openai.com/v1", NeedsKey: true, DefaultModel: "gpt-5", Description: "OpenAI, always through the Responses API (kage's id)"},
	{Name: "cerebras", Title: "Cerebras", API: APIChat, KeyVars: []string{"CEREBRAS_API_KEY"}, BaseURLVar: "CEREBRAS_BASE_URL", BaseURL: "https://api.cerebras.ai/v1", NeedsKey: true, DefaultModel: "qwen-3-coder-480b", Description: "Cerebras (OpenAI-compatible)"},
	{Name: "ollama", Title: "Ollama", API: APIChat, KeyVars: []string{"OLLAMA_API_KEY"}, BaseURLVar: "OLLAMA_BASE_URL", BaseURL: "http://localhost:11434/v1", Description: "Ollama local server"},
	{Name: "lmstudio", Title: "LM Studio", API: APIChat, KeyVars: []string{"LMSTUDIO_API_KEY"}, BaseURLVar: "LMSTUDIO_BASE_URL", BaseURL: "http://localhost:1234/v1", Description: "LM Studio local server"},
	{Name: "llamacpp", Title: "llama.cpp", API: APIChat, KeyVars: []string{"LLAMACPP_API_KEY"}, BaseURLVar: "LLAMACPP_BASE_URL", BaseURL: "http://localhost:8080/v1", Description: "llama.cpp server"},
	{Name: "vllm", Title: "vLLM", API: APIChat, KeyVars: []string{"VLLM_API_KEY"}, BaseURLVar: "VLLM_BASE_URL", BaseURL: "http://localhost:8000/v1", Description: "vLLM server"},
}

// DisplayName is the provider's Title, or its Name when it has none.
func (p Provider) DisplayName() string {
	if p.Title != "" {
		return p.Title
	}
	return p.Name
}

// LookupProvider returns the provider named name or one of its Aliases.
func LookupProvider(name string) (Provider, bool) {
	for _, p := range Providers {
		if p.Name == name || slices.Contains(p.Aliases, name) {
			return p, true
		}
	}
	return Provider{}, false
}

// BaseURL returns the base URL for provider: its override variable if set,
// else its default.
func BaseURL(env Env, p Provider) string {
	if p.BaseURLVar != "" {
		if u := strings.TrimSpace(env.Getenv(p.BaseURLVar)); u != "" {
			return u
		}
	}
	return p.BaseURL
}

// DataDir is where the session store lives: $CORVID_HOME, else
// $XDG_DATA_HOME/corvid, else ~/.local/share/corvid.
func DataDir(env Env) string {
	if h := env.Getenv("CORVID_HOME"); h != "" {
		return h
	}
	if x := env.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "corvid")
	}
	return filepath.Join(home(env), ".local", "share", "corvid")
}

// ConfigDir is $XDG_CONFIG_HOME/corvid, else ~/.config/corvid (under
// $CORVID_HOME/config when CORVID_HOME is set).
func ConfigDir(env Env) string {
	if h := env.Getenv("CORVID_HOME"); h != "" {
		return filepath.Join(h, "config")
	}
	if x := env.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "corvid")
	}
	return filepath.Join(home(env), ".config", "corvid")
}

func home(env Env) string {
	if h := env.Getenv("HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return os.TempDir()
}
