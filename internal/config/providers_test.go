package config

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// kageProvidersTOML is the examples of kage's docs/guide/providers.md,
// verbatim.
const kageProvidersTOML = `
[providers.deepseek]
base_url = "https://relay.internal/v1"
api_key_env = "DEEPSEEK_RELAY_KEY"

[providers.deepseek.headers]
X-Team = "infra"

[providers.custom.llama-local]
kind = "openai"                      # openai (default), anthropic, or gemini
base_url = "http://localhost:8080/v1"
display_name = "Llama (local)"       # shown in the picker; defaults to the id
api_key_env = ""                     # endpoint needs no key; omit to use LLAMA_LOCAL_API_KEY

# one [[...models]] table per model
[[providers.custom.llama-local.models]]
id = "llama-3-70b"
name = "Llama 3 70B"
context = 131072                     # optional; tokens
max_output = 8192                    # optional; tokens

[providers.custom.relay]
kind = "anthropic"
base_url = "https://relay.internal"
api_key_env = "RELAY_API_KEY"
thinking = true                      # thinking blocks survive across turns
caching = true                       # endpoint supports prompt caching
tool_use = true                      # endpoint accepts tool definitions (default)

[providers.custom.relay.headers]
Authorization = "Basic c2VydmljZTpwdW5jdWF0aW9u"

[[providers.custom.relay.models]]
id = "sonnet-relay"
name = "Sonnet via relay"
`

func TestKageProvidersExamplesLoadAsOverridesAndCustomProviders(t *testing.T) {
	env, _, cwd := layout(t, kageProvidersTOML, "")
	f, err := Load(env, cwd)
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := f.Provider("deepseek")
	if ds.BaseURL != "https://relay.internal/v1" || strings.Join(ds.KeyVars, ",") != "DEEPSEEK_RELAY_KEY" || ds.Headers["X-Team"] != "infra" || ds.API != APIChat || ds.Custom {
		t.Errorf("deepseek override: %+v", ds)
	}
	if b, _ := LookupProvider("deepseek"); b.BaseURL == ds.BaseURL || b.Headers != nil {
		t.Error("the override changed the built-in preset itself")
	}
	ll, ok := f.Provider("llama-local")
	if !ok || ll.API != APIChat || ll.NeedsKey || ll.Title != "Llama (local)" || ll.DefaultModel != "llama-3-70b" || !ll.Custom {
		t.Errorf("llama-local: %+v", ll)
	}
	if m := f.Providers["llama-local"].Models; len(m) != 1 || m[0].Window() != 131072 || m[0].MaxOutput != 8192 {
		t.Errorf("llama-local models: %+v", m)
	}
	rl, _ := f.Provider("relay")
	if rl.API != APIAnthropic || strings.Join(rl.KeyVars, ",") != "RELAY_API_KEY" || !rl.NeedsKey || rl.Headers["Authorization"] == "" {
		t.Errorf("relay: %+v", rl)
	}
	if p, m, err := ParseModel(f, "relay:sonnet-relay"); err != nil || p != "relay" || m != "sonnet-relay" {
		t.Errorf("ParseModel(relay:sonnet-relay) = %q %q %v", p, m, err)
	}
	var names []string
	for _, p := range f.AllProviders() {
		if p.Custom {
			names = append(names, p.Name)
		}
	}
	if strings.Join(names, ",") != "llama-local,relay" {
		t.Errorf("custom providers listed: %v", names)
	}
	for i, p := range f.AllProviders()[:len(Providers)] {
		if want, _ := f.Provider(Providers[i].Name); !reflect.DeepEqual(p, want) {
			t.Errorf("AllProviders()[%d] = %+v, Provider(%q) = %+v", i, p, Providers[i].Name, want)
		}
	}
}

func TestProviderSettingsDefaultsAndAliases(t *testing.T) {
	env, _, cwd := layout(t, `
[providers.fireworks]
base_url = "https://fw.proxy/v1"

[providers.gw]
base_url = "https://gw.example/v1"
api = "openai-responses"

[custom.myproxy]
base_url = "https://llm.example.com/v1"
`, "")
	f, err := Load(env, cwd)
	if err != nil {
		t.Fatal(err)
	}
	fw, _ := f.Provider("fireworks-ai")
	if fw.BaseURL != "https://fw.proxy/v1" {
		t.Errorf("an override under corvid's alias fireworks did not reach fireworks-ai: %+v", fw)
	}
	gw, _ := f.Provider("gw")
	if gw.API != APIResponses || strings.Join(gw.KeyVars, ",") != "GW_API_KEY" || !gw.NeedsKey {
		t.Errorf("gw: %+v (want responses, key GW_API_KEY by kage's default)", gw)
	}
	if old, ok := f.Provider("myproxy"); !ok || old.BaseURL != "https://llm.example.com/v1" {
		t.Errorf("an old [custom.NAME] table no longer loads: %+v", old)
	}
}

func TestProviderSettingsErrorsSayWhatToChange(t *testing.T) {
	cases := []struct{ toml, want string }{
		{"[providers.custom.x]\nkind = \"openai\"\n", `providers.x: base_url is required for a custom provider`},
		{"[providers.x]\nbase_url = \"http://h\"\napi = \"grpc\"\n", `providers.x: api must be "openai-chat", "openai-responses", "anthropic" or "gemini", not "grpc"`},
		{"[providers.anthropic]\napi = \"openai-chat\"\n", `remove api/kind (it applies to custom providers only)`},
		{"[providers.custom.openai]\nbase_url = \"http://h\"\n", `override it with [providers.openai] instead`},
		{"[providers.x]\nbase_url = \"http://h\"\n[providers.custom.x]\nbase_url = \"http://h\"\n", `also defined as [providers.x]`},
		{"[providers.Bad]\nbase_url = \"http://h\"\n", `may hold only lowercase letters, digits`},
		{"[providers.x]\nbase_url = \"http://h\"\n[[providers.x.models]]\nname = \"n\"\n", `providers.x.models[0]: id is required`},
		{"[providers.x]\nbase_url = \"http://h\"\nkind = \"openai\"\napi = \"anthropic\"\n", `disagree; keep one of them`},
		{"[providers.x]\nbase_url = \"http://h\"\nbase_ulr = \"typo\"\n", `unknown keys providers.x.base_ulr`},
		{"[providers.x]\nbase_url = \"http://h\"\n[custom.x]\nbase_url = \"http://h\"\n", `both as [custom.x] and [providers.x]`},
	}
	for _, c := range cases {
		env, _, cwd := layout(t, c.toml, "")
		_, err := Load(env, cwd)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("config\n%s\nerror %v, want it to contain %q", c.toml, err, c.want)
		}
	}
}

func TestUntrustedProjectCannotRetargetAProvider(t *testing.T) {
	env, _, cwd := layout(t, "", "[providers.anthropic]\nbase_url = \"https://attacker.example\"\n")
	f, err := Load(env, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := f.Provider("anthropic"); p.BaseURL != "" {
		t.Errorf("an untrusted project moved anthropic to %q", p.BaseURL)
	}
	if len(f.Ignored) == 0 || !strings.Contains(strings.Join(f.Ignored, "\n"), "providers") {
		t.Errorf("Ignored = %q, want the providers table named", f.Ignored)
	}
}

func TestIsCustomNameMatchesItsPattern(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	for _, name := range []string{"", "a", "9", "llama-local", "my_proxy2", "-a", "_a", "A", "aB", "a b", "a.b", "é", "a-", "a_", "x\n", "ab\x00"} {
		if got, want := isCustomName(name), re.MatchString(name); got != want {
			t.Errorf("isCustomName(%q) = %v, the pattern says %v", name, got, want)
		}
	}
}
