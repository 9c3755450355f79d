package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoModel means no model was named anywhere and no provider has
// credentials. Its message says how to fix that.
var ErrNoModel = errors.New("no model configured and no provider credentials found: set a key (e.g. ANTHROPIC_API_KEY) or run `corvid auth login PROVIDER`, or pick a model with -m provider:model")

// ResolveModel decides which provider and model to use. Precedence, highest
// first (also documented in docs/models.md):
//
//  1. flag (-m provider:model, or provider/model);
//  2. the CORVID_MODEL environment variable;
//  3. model in the project's .corvid/config.toml;
//  4. model in the user's config.toml;
//  5. the DefaultModel of the first provider in Providers order that has
//     credentials: anthropic, openai, gemini, openrouter, groq, deepseek,
//     mistral, xai, together, fireworks-ai, kage's ids (zai, …,
//     openai-responses), cerebras. Keyless local servers
//     (ollama, lmstudio, llamacpp, vllm) are never picked implicitly.
//
// (File.Model already holds 3 over 4.) An id may name only a provider
// ("openai": its default model) or only a well-known model ("gpt-5",
// "claude-…", "gemini-…": the provider is inferred). file may be nil.
func ResolveModel(env Env, file *File, flag string) (provider, model string, err error) {
	id, origin := strings.TrimSpace(flag), "-m"
	if id == "" {
		id, origin = strings.TrimSpace(env.Getenv("CORVID_MODEL")), "CORVID_MODEL"
	}
	if id == "" && file != nil {
		id, origin = strings.TrimSpace(file.Model), "config model"
	}
	if id != "" {
		provider, model, err = ParseModel(file, id)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", origin, err)
		}
		return provider, model, nil
	}
	var walk []Provider
	for _, p := range Providers {
		if p.NeedsKey && p.DefaultModel != "" {
			walk = append(walk, p)
		}
	}
	// Ask the keyring for every name the walk may need at once; the walk
	// then reads the answers in order.
	prefetchCredentials(env, walk, true)
	for _, p := range walk {
		if _, src := Credential(env, p); src != "" {
			return p.Name, p.DefaultModel, nil
		}
	}
	return "", "", ErrNoModel
}

// ParseModel splits a model id written as provider:model or provider/model
// (the first separator wins, so "ollama:qwen3:8b" and
// "openrouter/anthropic/claude-sonnet-4.6" work), a bare provider name, or a
// bare model id whose provider can be inferred from its name.
func ParseModel(file *File, id string) (provider, model string, err error) {
	if rest, ok := strings.CutPrefix(id, ScriptProvider+":"); ok && rest != "" {
		return ScriptProvider, rest, nil
	}
	if i := strings.IndexAny(id, ":/"); i > 0 {
		if p, ok := file.Provider(id[:i]); ok {
			model = id[i+1:]
			if model == "" {
				model = p.DefaultModel
			}
			if model == "" {
				return "", "", fmt.Errorf("%q names no model; write %s:MODEL", id, p.Name)
			}
			return p.Name, model, nil
		}
	}
	if p, ok := file.Provider(id); ok {
		if p.DefaultModel == "" {
			return "", "", fmt.Errorf("provider %s has no default model; write %s:MODEL", p.Name, p.Name)
		}
		return p.Name, p.DefaultModel, nil
	}
	if p := inferProvider(id); p != "" {
		return p, id, nil
	}
	if i := strings.IndexAny(id, ":/"); i > 0 {
		if near := nearestProvider(file, id[:i]); near != "" {
			return "", "", fmt.Errorf("unknown provider %q in %q; did you mean %s?", id[:i], id, near)
		}
		return "", "", fmt.Errorf("unknown provider %q in %q: write the model as provider:model, with one of these providers: %s", id[:i], id, providerNames(file))
	}
	return "", "", fmt.Errorf("unknown model %q: write it as provider:model (providers: %s)", id, providerNames(file))
}

// ScriptProvider is the scripted model's provider name: script:FILE plays
// FILE. It needs no credentials and is not in Providers.
const ScriptProvider = "script"

// nearestProvider is the provider name closest to a mistyped one, or "".
func nearestProvider(file *File, name string) string {
	var names []string
	for _, p := range file.AllProviders() {
		names = append(names, p.Name)
	}
	return Nearest(name, names)
}

// inferProvider guesses the provider of a bare model id from its family
// prefix. Only the first-party families are guessed; anything else must say
// its provider.
func inferProvider(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "claude-"):
		return "anthropic"
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "chatgpt-"), strings.HasPrefix(m, "codex-"),
		len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9':
		return "openai"
	case strings.HasPrefix(m, "gemini-"):
		return "gemini"
	}
	return ""
}

func providerNames(file *File) string {
	ps := file.AllProviders()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
