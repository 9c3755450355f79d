// Package config resolves where corvid keeps things (XDG paths, CORVID_HOME)
// and which credentials and base URLs each provider uses. It is the only
// package that reads the environment; everything else is handed values.
//
// Start with Env (a snapshot of the environment, injectable in tests),
// Credential and BaseURL.
package config

import (
	"os"
	"path/filepath"
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
}

// Providers lists the providers corvid knows, in the documented order used to
// pick a default when none is configured.
var Providers = []Provider{
	{Name: "anthropic", KeyVars: []string{"ANTHROPIC_API_KEY"}, BaseURLVar: "ANTHROPIC_BASE_URL", NeedsKey: true, Description: "Anthropic Claude"},
}

// LookupProvider returns the named provider.
func LookupProvider(name string) (Provider, bool) {
	for _, p := range Providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Credential returns the API key for provider and where it came from
// ("env:NAME"), or "" if none is configured.
func Credential(env Env, p Provider) (key, source string) {
	for _, v := range p.KeyVars {
		if k := strings.TrimSpace(env.Getenv(v)); k != "" {
			return k, "env:" + v
		}
	}
	return "", ""
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
