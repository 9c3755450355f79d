package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/config"
)

// kageConfigTOML is assembled from kage's documented examples
// (docs/guide/config.md, providers.md, mcp.md, permissions.md).
const kageConfigTOML = `
[provider]
default_model = "anthropic:claude-sonnet-4-6"

[ui]
theme = "default"
mouse = true

[providers.deepseek]
base_url = "https://relay.internal/v1"
api_key_env = "DEEPSEEK_RELAY_KEY"

[providers.deepseek.headers]
X-Team = "infra"

[providers.custom.llama-local]
kind = "openai"
base_url = "http://localhost:8080/v1"
display_name = "Llama (local)"
api_key_env = ""

[[providers.custom.llama-local.models]]
id = "llama-3-70b"
name = "Llama 3 70B"
context = 131072
max_output = 8192

[providers.custom.relay]
kind = "anthropic"
base_url = "https://relay.internal"
api_key_env = "RELAY_API_KEY"

[providers.custom.relay.headers]
Authorization = "Basic c2VydmljZTpwdW5jdWF0aW9u"

[[providers.custom.relay.models]]
id = "sonnet-relay"
name = "Sonnet via relay"

[mcp.servers.filesystem]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]

[mcp.servers.filesystem.env]
SOME_TOKEN = "fs-token-value"

[mcp.servers.github]
url = "https://example.com/mcp"

[mcp.servers.github.headers]
Authorization = "Bearer gh-token-value"

[mcp.servers.old]
command = "old-server"
disabled = true

[permissions]
confine_paths = false

[permissions.tools.shell]
default = "ask"
allow = ["git *", "cargo *"]
deny = ["rm -rf *"]

[permissions.mcp]
github = "allow"
`

// kageAuthJSON is kage's auth.json, format 2, with a legacy bare string
// (format 1) and an OAuth record.
const kageAuthJSON = `{
  "version": 2,
  "providers": {
    "zai": {"type": "api_key", "key": "zai-secret-key-123"},
    "fireworks-ai": "fw-legacy-secret-456",
    "relay": {"type": "api_key", "key": "relay-secret-789"},
    "openai": {"type": "oauth", "access_token": "oauth-secret-000", "refresh_token": "refresh-secret"}
  }
}`

func kageHome(t *testing.T) config.MapEnv {
	t.Helper()
	root := t.TempDir()
	env := config.MapEnv{
		"HOME":            filepath.Join(root, "home"),
		"XDG_CONFIG_HOME": filepath.Join(root, "xdg-config"),
		"XDG_DATA_HOME":   filepath.Join(root, "xdg-data"),
		"CORVID_HOME":     filepath.Join(root, "corvid"),
		"CORVID_KEYRING":  "off",
	}
	for path, content := range map[string]string{
		filepath.Join(root, "xdg-config", "kage", "config.toml"): kageConfigTOML,
		filepath.Join(root, "xdg-data", "kage", "auth.json"):     kageAuthJSON,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

var kageSecrets = []string{"zai-secret-key-123", "fw-legacy-secret-456", "relay-secret-789", "oauth-secret-000", "refresh-secret", "c2VydmljZTpwdW5jdWF0aW9u", "gh-token-value", "fs-token-value"}

func TestImportKageShowsThePlanAndWritesNothingWithoutConsent(t *testing.T) {
	env := kageHome(t)
	var out strings.Builder
	if err := runImportKage(env, false, strings.NewReader("n\n"), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"model anthropic:claude-sonnet-4-6",
		"provider deepseek (override): base_url https://relay.internal/v1; key from $DEEPSEEK_RELAY_KEY; headers X-Team",
		"provider llama-local (custom)", "provider relay (custom): kind anthropic",
		"MCP server filesystem: npx -y", "MCP server github: https://example.com/mcp (headers Authorization)",
		"not copied: MCP server old (disabled in kage)",
		"permission allow shell(git *)", "permission deny shell(rm -rf *)", "permission ask shell", "permission allow github__*",
		"key of zai (stored by kage)", "key of fireworks-ai (stored by kage)",
		"not copied: OAuth login of openai",
		"Nothing written.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
	for _, s := range kageSecrets {
		if strings.Contains(out.String(), s) {
			t.Errorf("the plan printed a secret %q", s)
		}
	}
	if _, err := os.Stat(filepath.Join(config.ConfigDir(env), "config.toml")); err == nil {
		t.Error("a config was written although the answer was no")
	}
	if k, _ := config.Credential(env, config.Provider{Name: "zai"}); k != "" {
		t.Error("a key was stored although the answer was no")
	}
}

func TestImportKageWritesAConfigCorvidLoadsAndStoresTheKeys(t *testing.T) {
	env := kageHome(t)
	target := filepath.Join(config.ConfigDir(env), "config.toml")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	// An existing corvid config: its settings win, and it is backed up.
	if err := os.WriteFile(target, []byte("model = \"openai:gpt-5\"\n[permissions]\nallow = [\"read\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := runImportKage(env, true, strings.NewReader(""), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, s := range kageSecrets {
		if strings.Contains(out.String(), s) {
			t.Errorf("the import printed a secret %q", s)
		}
	}
	if _, err := os.Stat(target + ".bak"); err != nil {
		t.Errorf("no backup of the existing config: %v", err)
	}
	f, err := config.Load(env, "")
	if err != nil {
		t.Fatalf("the written config does not load: %v", err)
	}
	if f.Model != "openai:gpt-5" {
		t.Errorf("model %q: the existing config's model must win", f.Model)
	}
	if ds, _ := f.Provider("deepseek"); ds.BaseURL != "https://relay.internal/v1" || ds.Headers["X-Team"] != "infra" || !slices.Equal(ds.KeyVars, []string{"DEEPSEEK_RELAY_KEY"}) {
		t.Errorf("deepseek override not imported: %+v", ds)
	}
	if rl, ok := f.Provider("relay"); !ok || rl.API != config.APIAnthropic || rl.Headers["Authorization"] == "" {
		t.Errorf("custom relay not imported: %+v", rl)
	}
	if ll, ok := f.Provider("llama-local"); !ok || ll.NeedsKey || ll.DefaultModel != "llama-3-70b" {
		t.Errorf("custom llama-local not imported: %+v", ll)
	}
	if fs, ok := f.MCPServers["filesystem"]; !ok || fs.Command != "npx" || len(fs.Args) != 3 || fs.Env["SOME_TOKEN"] == "" {
		t.Errorf("MCP filesystem: %+v", fs)
	}
	if gh, ok := f.MCPServers["github"]; !ok || gh.URL != "https://example.com/mcp" || gh.Headers["Authorization"] == "" {
		t.Errorf("MCP github: %+v", gh)
	}
	if _, ok := f.MCPServers["old"]; ok {
		t.Error("a disabled kage MCP server was imported")
	}
	p := f.Permissions
	if !slices.Equal(p.Allow, []string{"read", "shell(git *)", "shell(cargo *)", "github__*"}) || !slices.Equal(p.Ask, []string{"shell"}) || !slices.Equal(p.Deny, []string{"shell(rm -rf *)"}) {
		t.Errorf("permissions %+v", p)
	}
	for name, want := range map[string]string{"zai": "zai-secret-key-123", "fireworks-ai": "fw-legacy-secret-456", "relay": "relay-secret-789"} {
		pr, ok := f.Provider(name)
		if !ok {
			t.Fatalf("no provider %s", name)
		}
		pr.KeyVars = nil // the key must come from the store, not the environment
		if k, src := config.Credential(env, pr); k != want {
			t.Errorf("key of %s = %q from %q, want it in corvid's store", name, k, src)
		}
	}
	if k, _ := config.Credential(env, config.Provider{Name: "openai"}); k != "" {
		t.Error("an OAuth token was stored as an API key")
	}
}
