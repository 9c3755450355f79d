package config

import (
	"fmt"
	"maps"
	"strings"

	"github.com/BurntSushi/toml"
)

// ProviderSettings is a [providers.NAME] table of config.toml (kage's
// shape). For a built-in provider (or one of its aliases) it overrides:
//
//	[providers.deepseek]
//	base_url    = "https://relay.internal/v1"
//	api_key_env = "DEEPSEEK_RELAY_KEY"
//	[providers.deepseek.headers]
//	X-Team = "infra"
//
// For any other name it defines a custom provider, which needs base_url
// and may say its API family (api = "openai-chat" by default, or
// "openai-responses", "anthropic", "gemini"; kage's kind = "openai" means
// openai-chat). kage's [providers.custom.NAME] is the same thing. Models
// listed under [[providers.NAME.models]] join the catalog.
type ProviderSettings struct {
	BaseURL string `toml:"base_url"`
	// APIKeyEnv names the key's variable; nil keeps the default (the
	// built-in's, or NAME_API_KEY for a custom provider), "" means the
	// endpoint needs no key.
	APIKeyEnv *string           `toml:"api_key_env"`
	Headers   map[string]string `toml:"headers"`
	API       string            `toml:"api"`
	Kind      string            `toml:"kind"` // kage's name for api
	Title     string            `toml:"title"`
	// DisplayName is kage's name for Title.
	DisplayName string      `toml:"display_name"`
	Model       string      `toml:"model"` // default model id
	Models      []ModelSpec `toml:"models"`
	// Thinking, Caching and ToolUse are kage's capability hints for custom
	// providers; corvid reads them from the catalog instead and accepts
	// them so kage's files load unchanged.
	Thinking *bool `toml:"thinking"`
	Caching  *bool `toml:"caching"`
	ToolUse  *bool `toml:"tool_use"`
}

// ModelSpec is one [[providers.NAME.models]] entry: a model the catalog
// does not know, or knows differently.
type ModelSpec struct {
	ID   string `toml:"id"`
	Name string `toml:"name"`
	// ContextWindow in tokens; kage writes it as context.
	ContextWindow int64 `toml:"context_window"`
	Context       int64 `toml:"context"`
	MaxOutput     int   `toml:"max_output"`
	Images        bool  `toml:"images"`
	Reasoning     bool  `toml:"reasoning"`
	// Price is in USD per million tokens.
	Price ModelPrice `toml:"price"`
}

// ModelPrice is a ModelSpec's price, in USD per million tokens.
type ModelPrice struct {
	Input      float64 `toml:"input"`
	Output     float64 `toml:"output"`
	CacheRead  float64 `toml:"cache_read"`
	CacheWrite float64 `toml:"cache_write"`
}

// Window is the model's context window, whichever way it was written.
func (m ModelSpec) Window() int64 {
	if m.ContextWindow > 0 {
		return m.ContextWindow
	}
	return m.Context
}

// apiNames maps what config.toml may say in api or kind to Provider.API.
var apiNames = map[string]string{
	"openai-chat": APIChat, "chat": APIChat, "openai": APIChat,
	"openai-responses": APIResponses, "responses": APIResponses,
	"anthropic": APIAnthropic, "gemini": APIGemini,
}

// isCustomName reports whether name matches ^[a-z0-9][a-z0-9_-]*$ (a
// loop, not a regexp compiled at every start).
func isCustomName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '-')) {
			return false
		}
	}
	return name != ""
}

// decodeProviders decodes f's [providers] tables, lifting kage's
// [providers.custom.NAME] next to the others.
func decodeProviders(md toml.MetaData, f *File) error {
	if len(f.RawProviders) == 0 {
		return nil
	}
	f.Providers = map[string]ProviderSettings{}
	var custom map[string]ProviderSettings
	for _, name := range sortedKeys(f.RawProviders) {
		prim := f.RawProviders[name]
		if name == "custom" {
			if err := md.PrimitiveDecode(prim, &custom); err != nil {
				return fmt.Errorf("providers.custom: %w (write each custom provider as its own table, [providers.custom.NAME])", err)
			}
			continue
		}
		var s ProviderSettings
		if err := md.PrimitiveDecode(prim, &s); err != nil {
			return fmt.Errorf("providers.%s: %w", name, err)
		}
		f.Providers[name] = s
	}
	for _, name := range sortedKeys(custom) {
		if _, dup := f.Providers[name]; dup {
			return fmt.Errorf("providers.custom.%s: also defined as [providers.%s]; keep one of the two tables", name, name)
		}
		if _, ok := LookupProvider(name); ok {
			return fmt.Errorf("providers.custom.%s: %q is a built-in provider; override it with [providers.%s] instead, or pick another name", name, name, name)
		}
		f.Providers[name] = custom[name]
	}
	f.RawProviders = nil
	return nil
}

// validateProvider checks one [providers.NAME] table and normalizes its
// API family, saying exactly what to change when it is wrong.
func validateProvider(name string, s *ProviderSettings) error {
	where := "providers." + name
	if s.API != "" && s.Kind != "" && apiNames[s.API] != apiNames[s.Kind] {
		return fmt.Errorf("%s: api = %q and kind = %q disagree; keep one of them", where, s.API, s.Kind)
	}
	api := s.API
	if api == "" {
		api = s.Kind
	}
	for k := range s.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return fmt.Errorf("%s.headers: %q is not a header name; use letters, digits and dashes", where, k)
		}
	}
	for i, m := range s.Models {
		if m.ID == "" {
			return fmt.Errorf("%s.models[%d]: id is required (the MODEL of %s:MODEL)", where, i, name)
		}
		if m.Window() < 0 || m.MaxOutput < 0 || m.Price.Input < 0 || m.Price.Output < 0 {
			return fmt.Errorf("%s.models[%d] (%s): context, max_output and prices must not be negative", where, i, m.ID)
		}
	}
	if b, ok := LookupProvider(name); ok {
		if api != "" && apiNames[api] != b.API {
			return fmt.Errorf("%s: %s is a built-in provider speaking %q; remove api/kind (it applies to custom providers only), or define the endpoint under another name", where, b.Name, b.API)
		}
		s.API = b.API
		return nil
	}
	if !isCustomName(name) {
		return fmt.Errorf("%s: a custom provider name may hold only lowercase letters, digits, '-' and '_'", where)
	}
	if s.BaseURL == "" {
		return fmt.Errorf("%s: base_url is required for a custom provider (e.g. base_url = \"http://localhost:8080/v1\")", where)
	}
	if api == "" {
		api = "openai-chat"
	}
	a, ok := apiNames[api]
	if !ok {
		return fmt.Errorf("%s: api must be \"openai-chat\", \"openai-responses\", \"anthropic\" or \"gemini\", not %q", where, api)
	}
	s.API = a
	return nil
}

// mergeProviders lays o's [providers] tables over f's; a later table's
// fields replace an earlier one's, headers and models add up.
func (f *File) mergeProviders(o map[string]ProviderSettings) {
	if len(o) == 0 {
		return
	}
	if f.Providers == nil {
		f.Providers = map[string]ProviderSettings{}
	}
	for _, name := range sortedKeys(o) {
		s := o[name]
		key := name
		if b, ok := LookupProvider(name); ok {
			key = b.Name // an alias overrides its provider
		}
		old, ok := f.Providers[key]
		if !ok {
			f.Providers[key] = s
			continue
		}
		if s.BaseURL != "" {
			old.BaseURL = s.BaseURL
		}
		if s.APIKeyEnv != nil {
			old.APIKeyEnv = s.APIKeyEnv
		}
		if s.API != "" {
			old.API = s.API
		}
		for _, t := range []string{s.Title, s.DisplayName} {
			if t != "" {
				old.Title = t
			}
		}
		if s.Model != "" {
			old.Model = s.Model
		}
		old.Headers = withHeaders(old.Headers, s.Headers)
		old.Models = append(old.Models, s.Models...)
		f.Providers[key] = old
	}
}

// applySettings returns p with s laid over it.
func applySettings(p Provider, s ProviderSettings) Provider {
	if s.BaseURL != "" {
		p.BaseURL = s.BaseURL
	}
	if s.APIKeyEnv != nil {
		if *s.APIKeyEnv == "" {
			p.KeyVars, p.NeedsKey = nil, false
		} else {
			p.KeyVars, p.NeedsKey = []string{*s.APIKeyEnv}, true
		}
	}
	for _, t := range []string{s.DisplayName, s.Title} {
		if t != "" {
			p.Title = t
		}
	}
	if s.Model != "" {
		p.DefaultModel = s.Model
	}
	p.Headers = withHeaders(p.Headers, s.Headers)
	return p
}

// withHeaders returns base with more laid over it, leaving base's map
// untouched (it may be a preset's).
func withHeaders(base, more map[string]string) map[string]string {
	if len(more) == 0 {
		return base
	}
	h := maps.Clone(base)
	if h == nil {
		h = map[string]string{}
	}
	maps.Copy(h, more)
	return h
}

// customFromSettings builds the custom provider a [providers.NAME] table
// defines. Without api_key_env its key is NAME_API_KEY (kage's default).
func customFromSettings(name string, s ProviderSettings) Provider {
	p := Provider{
		Name:        name,
		API:         s.API,
		BaseURL:     s.BaseURL,
		Description: "custom (" + s.BaseURL + ")",
		Custom:      true,
		NeedsKey:    true,
		KeyVars:     []string{strings.ToUpper(strings.NewReplacer("-", "_").Replace(name)) + "_API_KEY"},
	}
	if p.API == "" {
		p.API = APIChat
	}
	if s.Model == "" && len(s.Models) > 0 {
		s.Model = s.Models[0].ID
	}
	return applySettings(p, s)
}
