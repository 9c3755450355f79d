package config

import (
	"strings"
	"testing"
)

// A mistyped key of config.toml is refused with the key it was probably
// meant to be, at any depth; a key nothing is near is refused without one.
func TestUnknownConfigKeysSuggestTheNearestKnownKey(t *testing.T) {
	for in, want := range map[string]string{
		"defualt_mode = \"ask\"\n":                         `unknown keys defualt_mode (did you mean default_mode?)`,
		"[permissions]\nalow = [\"read\"]\n":               `unknown keys permissions.alow (did you mean permissions.allow?)`,
		"[providers.anthropic]\nbase_ulr = \"http://h\"\n": `unknown keys providers.anthropic.base_ulr (did you mean providers.anthropic.base_url?)`,
		"[mcp_servers.fs]\ncomand = \"npx\"\n":             `unknown keys mcp_servers.fs.comand (did you mean mcp_servers.fs.command?)`,
		"zzzzzz = 1\n":                                     `unknown keys zzzzzz`,
	} {
		_, err := parseFile([]byte(in), "config.toml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
		if strings.HasSuffix(want, "zzzzzz") && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%q: suggested a key for a name nothing is near: %v", in, err)
		}
	}
}

func TestNearest(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"anthropc", "anthropic"}, {"OpenAI", "openai"}, {"gemni", "gemini"}, {"xy", ""}, {"zzzzzzzz", ""},
	} {
		if got := Nearest(c.name, []string{"anthropic", "openai", "gemini", "xai"}); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
