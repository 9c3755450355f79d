package providers

import (
	"slices"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/usererr"
)

// TestRegisterFillsOnlyTheGivenRegistry: every built-in provider of
// config.Providers is registered by the one explicit call, and nothing is
// registered by importing the provider packages.
func TestRegisterFillsOnlyTheGivenRegistry(t *testing.T) {
	r := llm.NewRegistry()
	Register(r)
	names := r.Names()
	for _, p := range config.Providers {
		if !slices.Contains(names, p.Name) {
			t.Errorf("provider %s is not registered (have %v)", p.Name, names)
		}
	}
	if !slices.Contains(names, "script") {
		t.Error("the scripted provider is not registered")
	}
	if got := llm.Default.Names(); len(got) != 0 {
		t.Errorf("importing the provider packages registered %v in llm.Default", got)
	}
}

// TestConfigResolvesKeyAndCatalog: the key comes from the environment and
// the model's facts from the catalog; without a key the error is a usererr
// that says how to add one.
func TestConfigResolvesKeyAndCatalog(t *testing.T) {
	home := t.TempDir()
	env := config.MapEnv{"CORVID_HOME": home, "HOME": home, "ANTHROPIC_API_KEY": "sk-test"}
	file, err := config.Load(env, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pc, err := Config(env, file, "anthropic", "claude-sonnet-4-6")
	if err != nil {
		t.Fatal(err)
	}
	if pc.APIKey != "sk-test" || pc.Provider != "anthropic" || pc.Info.ContextWindow == 0 {
		t.Errorf("Config = %+v", pc)
	}
	_, err = Config(env, file, "gemini", "gemini-2.5-pro")
	u, ok := usererr.Of(err)
	if !ok || !strings.Contains(u.Message, "GEMINI_API_KEY") || !strings.Contains(u.Message, "corvid auth login gemini") {
		t.Errorf("no key: %v (usererr %v)", err, ok)
	}
	if _, err := Config(env, file, "nosuch", "m"); err == nil || !strings.Contains(err.Error(), `unknown provider "nosuch"`) {
		t.Errorf("unknown provider: %v", err)
	}
}
