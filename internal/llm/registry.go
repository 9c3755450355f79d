package llm

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Factory builds a Model for one provider.
type Factory func(cfg ProviderConfig) (Model, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register makes a provider available under name. Provider packages call it
// from init; cmd/corvid imports them.
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[name] = f
}

// Registered lists the registered provider names, sorted.
func Registered() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open builds the model cfg names.
func Open(cfg ProviderConfig) (Model, error) {
	registryMu.RLock()
	f, ok := registry[cfg.Provider]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown provider %q (known: %s)", cfg.Provider, strings.Join(Registered(), ", "))
	}
	return f(cfg)
}

// ParseModelID splits "provider:model" or "provider/model". A bare name has
// no provider.
func ParseModelID(id string) (provider, model string) {
	if i := strings.IndexAny(id, ":/"); i > 0 {
		return id[:i], id[i+1:]
	}
	return "", id
}
