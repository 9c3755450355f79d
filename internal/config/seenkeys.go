package config

import "sync"

// Keys that live only in the OS keyring are read lazily, after the
// redactor was made from the environment's and auth.json's keys. Each one
// Credential returns is remembered here so that the redactor can learn it
// (agent.Config.MoreSecrets): a command that reads the keyring itself
// (`secret-tool lookup service corvid …`) prints it as [REDACTED].
var keyringKeys struct {
	mu   sync.Mutex
	list []string
}

func rememberKeyringKey(k string) {
	keyringKeys.mu.Lock()
	defer keyringKeys.mu.Unlock()
	for _, have := range keyringKeys.list {
		if have == k {
			return
		}
	}
	keyringKeys.list = append(keyringKeys.list, k)
}

// KeyringKeysSeen returns the keys Credential has read from the OS keyring
// in this process so far. The list only grows.
func KeyringKeysSeen() []string {
	keyringKeys.mu.Lock()
	defer keyringKeys.mu.Unlock()
	return append([]string(nil), keyringKeys.list...)
}
