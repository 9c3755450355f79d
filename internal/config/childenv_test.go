package config

import "testing"

func TestWithheldCoversProviderKeysAndCorvidSettingsButHonoursPassEnv(t *testing.T) {
	custom := Provider{Name: "proxy", KeyVars: []string{"MYPROXY_TOKEN"}}
	providers := append(AllProvidersForTest(), custom)
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true, "SOME_API_KEY": true,
		"ANTHROPIC_AUTH_TOKEN": true, "CORVID_HOME": true, "MYPROXY_TOKEN": true,
		"PATH": false, "HOME": false, "GITHUB_TOKEN": false,
	} {
		if got := Withheld(name, providers, nil); got != want {
			t.Errorf("Withheld(%s) = %v, want %v", name, got, want)
		}
	}
	if Withheld("CORVID_HOME", providers, []string{"CORVID_HOME"}) {
		t.Error("pass_env did not pass CORVID_HOME on")
	}
}

func AllProvidersForTest() []Provider { return (*File)(nil).AllProviders() }
