package config

import (
	"os"
	"slices"
	"strings"
)

// Children (shell commands, MCP stdio servers, anything corvid starts) must
// not inherit the provider keys corvid was launched with, nor corvid's own
// CORVID_* settings: a model that runs `printenv` would otherwise read the
// key into the conversation. corvid itself keeps reading them through a
// snapshot taken before they are removed from the process environment.

// SnapshotEnv copies the process environment into an Env, so that corvid
// can still read what ScrubEnvironment removes.
func SnapshotEnv() MapEnv {
	m := MapEnv{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// Withheld reports whether a child must not inherit variable name: a key
// variable of a known provider, any *_API_KEY or *_AUTH_TOKEN, or a
// CORVID_* setting. pass lists names the user passes on anyway (pass_env in
// the user config).
func Withheld(name string, providers []Provider, pass []string) bool {
	return withheld(name, pass, func(name string) bool {
		for _, p := range providers {
			if slices.Contains(p.KeyVars, name) {
				return true
			}
		}
		return false
	})
}

func withheld(name string, pass []string, keyVar func(string) bool) bool {
	if slices.Contains(pass, name) {
		return false
	}
	if strings.HasPrefix(name, "CORVID_") || strings.HasSuffix(name, "_API_KEY") || strings.HasSuffix(name, "_AUTH_TOKEN") {
		return true
	}
	return keyVar(name)
}

// ScrubEnvironment removes the withheld variables from the process
// environment, so every child corvid starts from now on goes without them,
// and (on Linux) from the exec-time block that /proc/PID/environ shows,
// after which corvid is non-dumpable (see hideExecEnvironment). It returns
// the values removed that look like secrets (for redaction), and an error
// when the exec-time block could not be cleared: Go's copy is scrubbed all
// the same, so the caller logs it and goes on.
func ScrubEnvironment(providers []Provider, pass []string) (secrets []string, err error) {
	// One set of key variables rather than a walk over every provider's
	// for each variable of the environment.
	keyVars := map[string]bool{}
	for _, p := range providers {
		for _, k := range p.KeyVars {
			keyVars[k] = true
		}
	}
	isKeyVar := func(name string) bool { return keyVars[name] }
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if !withheld(k, pass, isKeyVar) {
			continue
		}
		_ = os.Unsetenv(k)
		if !strings.HasPrefix(k, "CORVID_") {
			secrets = append(secrets, v)
		}
	}
	return secrets, hideExecEnvironment(func(name string) bool { return withheld(name, pass, isKeyVar) })
}

// StoredKeys returns the API keys saved in auth.json (not the keyring,
// whose lookups may block), for redaction.
func StoredKeys(env Env) []string {
	f, err := readAuthFile(AuthFile(env))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range f {
		if k := strings.TrimSpace(e.Key); k != "" {
			out = append(out, k)
		}
	}
	return out
}
