package config

import (
	"os"
	"slices"
	"testing"
)

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

func TestScrubEnvironmentRemovesWhatWithheldNames(t *testing.T) {
	custom := Provider{Name: "proxy", KeyVars: []string{"MYPROXY_TOKEN"}}
	providers := append(AllProvidersForTest(), custom)
	pass := []string{"CORVID_PASSED_TEST"}
	vars := map[string]string{"ANTHROPIC_API_KEY": "k1", "MYPROXY_TOKEN": "k2", "GEMINI_API_KEY": "k3",
		"CORVID_SETTING_TEST": "v", "GITHUB_TOKEN": "g", "CORVID_PASSED_TEST": "p"}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	secrets, err := ScrubEnvironment(providers, pass)
	if err != nil {
		t.Logf("exec-time environment: %v", err)
	}
	for k := range vars {
		_, kept := os.LookupEnv(k)
		if want := !Withheld(k, providers, pass); kept != want {
			t.Errorf("%s kept = %v, want %v", k, kept, want)
		}
	}
	slices.Sort(secrets)
	if !slices.Equal(secrets, []string{"k1", "k2", "k3"}) {
		t.Errorf("secrets = %q, want the three keys", secrets)
	}
}
