package catalog

import (
	"math"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
)

func TestEmbeddedCatalogIsConsistent(t *testing.T) {
	for _, p := range Providers() {
		seen := map[string]bool{}
		for _, e := range List(p) {
			if seen[e.ID] {
				t.Errorf("%s:%s listed twice", p, e.ID)
			}
			seen[e.ID] = true
			if e.Name == "" || e.ContextWindow <= 0 || e.MaxOutput <= 0 || e.Price.Input <= 0 || e.Price.Output <= 0 {
				t.Errorf("%s:%s incomplete: %+v", p, e.ID, e)
			}
			if int64(e.MaxOutput) > e.ContextWindow && len(e.ContextTiers) == 0 {
				t.Errorf("%s:%s max output above context", p, e.ID)
			}
			if len(e.ContextTiers) > 0 && e.ContextTiers[0] != e.ContextWindow {
				t.Errorf("%s:%s first tier %d is not the default window %d", p, e.ID, e.ContextTiers[0], e.ContextWindow)
			}
		}
	}
	for _, want := range [][2]string{{"anthropic", "claude-sonnet-4-6"}, {"anthropic", "claude-haiku-4-5"}, {"openai", "gpt-5"}, {"openai", "o3"}, {"gemini", "gemini-2.5-pro"}, {"gemini", "gemini-3-pro-preview"}} {
		if !Lookup(want[0], want[1]).Known {
			t.Errorf("%s:%s missing", want[0], want[1])
		}
	}
}

func TestLookupFindsAliasesSnapshotsAndVendorIDs(t *testing.T) {
	if e := Lookup("anthropic", "claude-sonnet-4-5-20250929"); e.ID != "claude-sonnet-4-5" || !e.Known {
		t.Errorf("alias: %+v", e)
	}
	if e := Lookup("anthropic", "claude-sonnet-4-6-20260101"); e.ID != "claude-sonnet-4-6-20260101" || !e.Known || e.ContextWindow != 200000 {
		t.Errorf("snapshot: %+v", e)
	}
	if e := Lookup("openai", "gpt-5-mini"); e.Price.Input != 0.25 {
		t.Errorf("gpt-5-mini must not resolve to gpt-5: %+v", e)
	}
	if e := Lookup("openrouter", "anthropic/claude-opus-4.1"); !e.Known || e.Provider != "openrouter" || e.Price.Input != 15 {
		t.Errorf("vendor id: %+v", e)
	}
	if info := Lookup("anthropic", "claude-sonnet-4-6").Info(); info.ID != "anthropic:claude-sonnet-4-6" || !info.Images || !info.Reasoning || info.ContextWindow != 200000 {
		t.Errorf("info = %+v", info)
	}
	if tiers := Lookup("anthropic", "claude-sonnet-4-6").Tiers(); len(tiers) != 2 || tiers[1] != 1000000 {
		t.Errorf("tiers = %v", tiers)
	}
}

func TestUnknownModelsGetUsableDefaults(t *testing.T) {
	e := Lookup("openai", "gpt-99")
	if e.Known || e.ContextWindow != DefaultContextWindow || e.MaxOutput != DefaultMaxOutput || e.Info().ID != "openai:gpt-99" {
		t.Errorf("unknown: %+v", e)
	}
	if _, known := e.Cost(llm.Usage{InputTokens: 10}); known {
		t.Error("unknown model has a known cost")
	}
	l := Lookup("ollama", "qwen3:8b")
	if l.ContextWindow != DefaultLocalContextWindow {
		t.Errorf("local: %+v", l)
	}
	if usd, known := l.Cost(llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}); usd != 0 || !known {
		t.Errorf("local cost = %v, %v", usd, known)
	}
}

func TestCostUsesCachePricesAndLongContextTier(t *testing.T) {
	e := Lookup("anthropic", "claude-sonnet-4-6")
	usd, known := e.Cost(llm.Usage{InputTokens: 1_000, OutputTokens: 2_000, CacheReadTokens: 10_000, CacheWriteTokens: 4_000})
	want := (1_000*3.0 + 2_000*15.0 + 10_000*0.3 + 4_000*3.75) / 1e6
	if !known || math.Abs(usd-want) > 1e-9 {
		t.Errorf("cost = %v, want %v", usd, want)
	}
	// 300K tokens of input crosses the 200K tier: $6 in, $22.50 out.
	usd, _ = e.Cost(llm.Usage{InputTokens: 300_000, OutputTokens: 1_000})
	want = (300_000*6.0 + 1_000*22.5) / 1e6
	if math.Abs(usd-want) > 1e-9 {
		t.Errorf("long-context cost = %v, want %v", usd, want)
	}
}

func TestUnknownIDOfAKnownFamilyGetsTheNewestRelativesLimits(t *testing.T) {
	e := Lookup("anthropic", "claude-opus-4-7")
	if e.Known || e.MaxOutput != 128000 || !e.Reasoning || !e.Images || len(e.Tiers()) != 2 || e.ID != "claude-opus-4-7" {
		t.Errorf("claude-opus-4-7: %+v, want claude-opus-4-6's limits, price unknown", e)
	}
	if _, known := e.Cost(llm.Usage{InputTokens: 10}); known {
		t.Error("a model newer than the catalog has a known cost")
	}
	if e := Lookup("gemini", "gemini-3.5-pro"); e.MaxOutput != 65536 || !e.Reasoning {
		t.Errorf("gemini-3.5-pro: %+v", e)
	}
}
