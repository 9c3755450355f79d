// Package providers is where corvid's model providers are constructed:
// Register fills a registry with every built-in provider (called once by
// cmd/corvid; provider packages never register themselves), Config
// resolves provider:model into what a factory needs (credentials, base URL,
// catalog facts), and Models says which models a configured provider
// offers. Front ends call these instead of reading credentials or the
// catalog themselves.
package providers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/anthropic"
	"github.com/corvid-agent/corvid/internal/llm/catalog"
	"github.com/corvid-agent/corvid/internal/llm/gemini"
	"github.com/corvid-agent/corvid/internal/llm/openai"
	"github.com/corvid-agent/corvid/internal/llm/script"
	"github.com/corvid-agent/corvid/internal/usererr"
)

// Register adds every built-in provider to r: Anthropic, Gemini, the
// OpenAI-protocol family (OpenAI, OpenRouter, Groq, local servers, …) and
// the offline scripted model.
func Register(r *llm.Registry) {
	anthropic.Register(r)
	gemini.Register(r)
	openai.Register(r)
	script.Register(r)
}

// ErrNoCredentials is the cause of Config's error when the provider needs a
// key and none is set or stored.
var ErrNoCredentials = errors.New("no credentials")

// Config is what llm.Open needs for provider:model, resolved from config
// (credentials, base URL, custom providers) and the catalog (context
// window, output limit, images, reasoning). Custom providers of file are
// registered with llm.Default on the way. It fails with a how-to when the
// provider needs a key and has none (ErrNoCredentials).
func Config(env config.Env, file *config.File, provider, model string) (llm.ProviderConfig, error) {
	p, ok := file.Provider(provider)
	if !ok {
		return llm.ProviderConfig{}, usererr.New(fmt.Sprintf("unknown provider %q", provider), "")
	}
	if p.Custom {
		if err := registerCustom(p); err != nil {
			return llm.ProviderConfig{}, usererr.Wrap(err, err.Error())
		}
	}
	RegisterModels(file)
	key, _ := config.Credential(env, p)
	if p.NeedsKey && key == "" {
		return llm.ProviderConfig{}, &usererr.Error{
			Message: fmt.Sprintf("no credentials for %s: set %s or run `corvid auth login %s`", p.DisplayName(), strings.Join(p.KeyVars, " or "), p.Name),
			Err:     ErrNoCredentials,
		}
	}
	return llm.ProviderConfig{
		Provider: p.Name,
		Model:    model,
		APIKey:   key,
		BaseURL:  config.BaseURL(env, p),
		Info:     catalog.Lookup(p.Name, model).Info(),
		Headers:  p.Headers,

		IdleTimeout: config.StreamIdleTimeout(env),
	}, nil
}

// registerCustom makes a custom provider of config.toml buildable by
// llm.Open, through the package of its API family.
func registerCustom(p config.Provider) error {
	switch p.API {
	case config.APIAnthropic:
		llm.Default.Register(p.Name, anthropic.New)
	case config.APIGemini:
		llm.Default.Register(p.Name, func(cfg llm.ProviderConfig) (llm.Model, error) { return gemini.New(cfg, nil) })
	default:
		return openai.RegisterCustom(p)
	}
	return nil
}

// RegisterModels adds the models of file's [providers.NAME.models] tables
// to the catalog, so their context windows and prices apply.
func RegisterModels(file *config.File) {
	if file == nil {
		return
	}
	for name, s := range file.Providers {
		if p, ok := file.Provider(name); ok {
			name = p.Name
		}
		for _, m := range s.Models {
			e := catalog.Lookup(name, m.ID)
			e.Name = cmp.Or(m.Name, e.Name)
			if w := m.Window(); w > 0 {
				e.ContextWindow, e.ContextTiers = w, nil
			}
			if m.MaxOutput > 0 {
				e.MaxOutput = m.MaxOutput
			}
			e.Images = e.Images || m.Images
			e.Reasoning = e.Reasoning || m.Reasoning
			if m.Price != (config.ModelPrice{}) {
				e.Price = catalog.Price{Input: m.Price.Input, Output: m.Price.Output, CacheRead: m.Price.CacheRead, CacheWrite: m.Price.CacheWrite}
				e.PriceTiers = nil
			}
			catalog.Add(name, e)
		}
	}
}

// Models lists the models a configured provider offers, with what the
// catalog knows of each: a local server's (asked briefly over GET /models;
// reachable says whether it answered), or the catalog's for a hosted
// provider, else its default model.
func Models(env config.Env, st config.ProviderStatus) (models []catalog.Entry, reachable bool) {
	p := st.Provider
	var ids []string
	if !p.NeedsKey {
		key, _ := config.Credential(env, p)
		ids, reachable = listServed(st.BaseURL, key)
	} else {
		for _, e := range catalog.List(p.Name) {
			ids = append(ids, e.ID)
		}
		if len(ids) == 0 && p.DefaultModel != "" {
			ids = []string{p.DefaultModel}
		}
		reachable = true
	}
	for _, id := range ids {
		e := catalog.Lookup(p.Name, id)
		e.ID = id // as listed, even where it is an alias
		models = append(models, e)
	}
	return models, reachable
}

// listServed asks an OpenAI-compatible server for GET /models. It reports
// whether the server answered at all.
func listServed(baseURL, key string) ([]string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(baseURL, "/")+"/models", nil)
	if err != nil {
		return nil, false
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := llm.HTTPClient(baseURL, nil).Do(req)
	if err != nil {
		return nil, false
	}
	defer res.Body.Close()
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(res.Body, 4<<20)).Decode(&body) != nil {
		return nil, true
	}
	var ids []string
	for _, d := range body.Data {
		ids = append(ids, d.ID)
	}
	return ids, true
}
