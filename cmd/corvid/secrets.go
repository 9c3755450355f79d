package main

import (
	"log/slog"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
)

// withholdSecrets removes the provider keys and CORVID_* settings from the
// environment children inherit (Go's copy and, on Linux, the exec-time
// block /proc/PID/environ shows) and returns every value the tool-output
// redactor must hide: those keys, the keys saved in auth.json, and the
// values of configured provider and MCP server headers (a gateway token is
// a key by another name).
func withholdSecrets(env config.Env, file *config.File, logger *slog.Logger) []string {
	providers := file.AllProviders()
	secrets, err := config.ScrubEnvironment(providers, file.PassEnv)
	if err != nil {
		logger.Warn("provider keys may still be readable in this process's /proc/PID/environ", "err", err)
	}
	secrets = append(secrets, config.StoredKeys(env)...)
	for _, p := range providers {
		for _, v := range p.Headers {
			secrets = append(secrets, llm.HeaderSecrets(v)...)
		}
	}
	for _, s := range file.MCPServers {
		for _, v := range s.Headers {
			secrets = append(secrets, llm.HeaderSecrets(v)...)
		}
	}
	return secrets
}
