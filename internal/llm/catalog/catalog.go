// Package catalog is what corvid knows about models it has not asked:
// context windows (and the selectable tiers some models have), output
// limits, image input, reasoning support and prices, per provider, from a
// JSON file (models.json) kept by hand and compiled into catalog_data.go by
// go generate (TestCatalogDataMatchesModelsJSON fails until it is).
//
// Start with Lookup: it always returns a usable Entry, falling back to
// conservative defaults for ids the file does not know, so a new model
// works before the catalog learns about it. Entry.Info feeds
// llm.ProviderConfig.Info; Entry.Cost prices an llm.Usage.
package catalog

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
)

//go:generate go test -run TestCatalogDataMatchesModelsJSON -update

// providerEntries are one provider's models, in models.json's order.
type providerEntries struct {
	name    string
	entries []Entry
}

// Price is in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read,omitempty"`
	CacheWrite float64 `json:"cache_write,omitempty"`
}

// PriceTier is a price that applies when a request's input (cached or not)
// is larger than AboveInputTokens, e.g. long-context pricing.
type PriceTier struct {
	AboveInputTokens int64 `json:"above_input_tokens"`
	Price            Price `json:"price"`
}

// Entry describes one model.
type Entry struct {
	Provider string `json:"-"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	// ContextWindow is the default window in tokens.
	ContextWindow int64 `json:"context_window"`
	// ContextTiers lists the windows a user may choose between, smallest
	// (the default) first; empty or one entry means there is no choice.
	ContextTiers []int64     `json:"context_tiers,omitempty"`
	MaxOutput    int         `json:"max_output"`
	Images       bool        `json:"images"`
	Reasoning    bool        `json:"reasoning"`
	Price        Price       `json:"price"`
	PriceTiers   []PriceTier `json:"price_tiers,omitempty"`
	Aliases      []string    `json:"aliases,omitempty"`
	// Known is false for an Entry made of defaults for an id the catalog
	// does not list; its prices are unknown.
	Known bool `json:"-"`
	// Local marks models of keyless local servers: they cost nothing.
	Local bool `json:"-"`
}

type file struct {
	Providers map[string][]Entry `json:"providers"`
}

// load maps the providers of catalog_data.go (static data: nothing is
// decoded at run time) to their models.
var load = sync.OnceValue(func() map[string][]Entry {
	m := make(map[string][]Entry, len(builtin))
	for _, p := range builtin {
		m[p.name] = p.entries
	}
	return m
})

// localProviders are keyless servers whose models are free and whose
// context is whatever the user loaded, so defaults are kept small.
var localProviders = map[string]bool{"ollama": true, "lmstudio": true, "llamacpp": true, "vllm": true}

// Defaults for unknown models: small enough to be safe on most servers.
const (
	DefaultContextWindow      = 128_000
	DefaultMaxOutput          = 8_192
	DefaultLocalContextWindow = 32_768
	DefaultLocalMaxOutput     = 4_096
)

var (
	addedMu sync.RWMutex
	added   = map[string][]Entry{}
)

// Add makes entries known for provider, ahead of the file's (models a user
// declares under [providers.NAME.models] in config.toml). An entry with
// the id of an earlier one replaces it.
func Add(provider string, entries ...Entry) {
	addedMu.Lock()
	defer addedMu.Unlock()
	for _, e := range entries {
		e.Provider, e.Known = provider, true
		es := added[provider]
		i := slices.IndexFunc(es, func(o Entry) bool { return o.ID == e.ID })
		if i >= 0 {
			es[i] = e
		} else {
			es = append(es, e)
		}
		added[provider] = es
	}
}

// entries are provider's models: those added from config, then the
// file's. A provider that shares another's models (config.Provider.Shares,
// e.g. openai-responses) gets that one's, and an alias its provider's.
func entries(provider string) []Entry {
	name := provider
	if p, ok := config.LookupProvider(provider); ok {
		name = p.CatalogName()
	}
	addedMu.RLock()
	out := slices.Clone(added[provider])
	addedMu.RUnlock()
	for _, e := range load()[name] {
		if !slices.ContainsFunc(out, func(o Entry) bool { return o.ID == e.ID }) {
			e.Provider = provider
			out = append(out, e)
		}
	}
	return out
}

// List returns the catalog's models of provider, in the file's order
// (newest and most useful first), after any added from config. Local
// servers have none.
func List(provider string) []Entry {
	return entries(provider)
}

// Providers lists the providers the catalog has models for, sorted.
func Providers() []string {
	var ps []string
	for p := range load() {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// Lookup finds provider's model by id or alias; then a dated snapshot of a
// listed model ("claude-sonnet-4-5-20250929" → "claude-sonnet-4-5", longest
// prefix wins); then, for "vendor/model" ids of aggregators, the vendor's
// own entry. Anything else gets conservative defaults with Known false.
func Lookup(provider, model string) Entry {
	es := entries(provider)
	for _, e := range es {
		if e.ID == model || slices.Contains(e.Aliases, model) {
			return e
		}
	}
	var best *Entry
	for i, e := range es {
		if strings.HasPrefix(model, e.ID+"-") && (best == nil || len(e.ID) > len(best.ID)) {
			best = &es[i]
		}
	}
	if best != nil {
		e := *best
		e.ID = model
		return e
	}
	if vendor, rest, ok := strings.Cut(model, "/"); ok && provider != vendorProvider(vendor) && vendorProvider(vendor) != "" {
		if e := Lookup(vendorProvider(vendor), strings.ReplaceAll(rest, ".", "-")); e.Known {
			e.Provider, e.ID = provider, model
			return e
		}
	}
	if f := newestOfFamily(es, model); f != nil && !localProviders[provider] {
		// A model newer than this file, of a family it knows
		// ("claude-opus-4-7"): the family's current limits and
		// capabilities; its price is unknown.
		return Entry{Provider: provider, ID: model, Name: model, ContextWindow: f.ContextWindow, ContextTiers: slices.Clone(f.ContextTiers),
			MaxOutput: f.MaxOutput, Images: f.Images, Reasoning: f.Reasoning}
	}
	e := Entry{Provider: provider, ID: model, Name: model, ContextWindow: DefaultContextWindow, MaxOutput: DefaultMaxOutput}
	if localProviders[provider] {
		e.ContextWindow, e.MaxOutput, e.Local = DefaultLocalContextWindow, DefaultLocalMaxOutput, true
	}
	return e
}

// family splits a model id into its name words and its version numbers:
// "claude-opus-4-6" → "claude-opus", [4 6]; "gemini-3.5-flash" →
// "gemini-flash", [3 5]. A dated snapshot's date is not a version.
func family(id string) (name string, version []int) {
	var words []string
	for _, seg := range strings.Split(id, "-") {
		if seg == "" {
			continue
		}
		if seg[0] >= '0' && seg[0] <= '9' {
			if len(seg) >= 8 {
				continue // a date: 20250929
			}
			for _, n := range strings.Split(seg, ".") {
				v, err := strconv.Atoi(n)
				if err != nil {
					break
				}
				version = append(version, v)
			}
			continue
		}
		words = append(words, seg)
	}
	return strings.Join(words, "-"), version
}

// newestOfFamily returns the entry of es with the highest version in
// model's family, or nil. Only names of two words or more make a family
// ("claude-opus", "gemini-flash"), so "gpt-99" is nobody's relative.
func newestOfFamily(es []Entry, model string) *Entry {
	name, _ := family(model)
	if !strings.Contains(name, "-") {
		return nil
	}
	var best *Entry
	var bestV []int
	for i := range es {
		n, v := family(es[i].ID)
		if n == name && (best == nil || slices.Compare(v, bestV) > 0) {
			best, bestV = &es[i], v
		}
	}
	return best
}

// vendorProvider maps the vendor prefix aggregators use to corvid's
// provider of that vendor.
func vendorProvider(vendor string) string {
	switch strings.ToLower(vendor) {
	case "anthropic":
		return "anthropic"
	case "openai":
		return "openai"
	case "google":
		return "gemini"
	}
	return ""
}

// Info is the entry as llm.ModelInfo (ID is provider:model).
func (e Entry) Info() llm.ModelInfo {
	return llm.ModelInfo{
		ID:            e.Provider + ":" + e.ID,
		ContextWindow: e.ContextWindow,
		MaxOutput:     e.MaxOutput,
		Images:        e.Images,
		Reasoning:     e.Reasoning,
	}
}

// Tiers returns the selectable context windows (at least the default one).
func (e Entry) Tiers() []int64 {
	if len(e.ContextTiers) == 0 {
		return []int64{e.ContextWindow}
	}
	return slices.Clone(e.ContextTiers)
}

// Cost prices one response's usage. known is false when the catalog has no
// price for the model (unknown ids); local models cost 0, known.
// llm.Usage counts input without cached tokens, so each kind is priced
// once; the tier is chosen by the whole input (uncached + cached).
func (e Entry) Cost(u llm.Usage) (usd float64, known bool) {
	if e.Local {
		return 0, true
	}
	if !e.Known {
		return 0, false
	}
	p := e.Price
	total := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	tiers := slices.SortedFunc(slices.Values(e.PriceTiers), func(a, b PriceTier) int { return cmp.Compare(a.AboveInputTokens, b.AboveInputTokens) })
	for _, t := range tiers {
		if total > t.AboveInputTokens {
			p = t.Price
		}
	}
	cacheRead, cacheWrite := p.CacheRead, p.CacheWrite
	if cacheRead == 0 {
		cacheRead = p.Input // no discount published: charge as input
	}
	if cacheWrite == 0 {
		cacheWrite = p.Input
	}
	usd = (float64(u.InputTokens)*p.Input +
		float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*cacheRead +
		float64(u.CacheWriteTokens)*cacheWrite) / 1e6
	return usd, true
}
