package llm

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Factory builds a Model for one provider.
type Factory func(cfg ProviderConfig) (Model, error)

// Registry maps provider names to factories. Provider packages do not
// register themselves: each exports Register(*Registry), and
// internal/llm/providers.Register calls them all, once, from cmd/corvid.
type Registry struct {
	mu sync.RWMutex
	m  map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: map[string]Factory{}} }

// Default is the registry Open uses.
var Default = NewRegistry()

// Register makes a provider available under name.
func (r *Registry) Register(name string, f Factory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[name] = f
}

// Names lists the registered provider names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open builds the model cfg names.
func (r *Registry) Open(cfg ProviderConfig) (Model, error) {
	r.mu.RLock()
	f, ok := r.m[cfg.Provider]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown provider %q (known: %s)", cfg.Provider, strings.Join(r.Names(), ", "))
	}
	return f(cfg)
}

// Open builds the model cfg names from the Default registry.
func Open(cfg ProviderConfig) (Model, error) { return Default.Open(cfg) }

// ParseModelID splits "provider:model" or "provider/model". A bare name has
// no provider.
func ParseModelID(id string) (provider, model string) {
	if i := strings.IndexAny(id, ":/"); i > 0 {
		return id[:i], id[i+1:]
	}
	return "", id
}
