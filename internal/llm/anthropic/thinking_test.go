package anthropic

import "testing"

func TestAdaptiveThinkingFromClaude46On(t *testing.T) {
	for model, want := range map[string]bool{
		"claude-opus-4-6":            true,
		"claude-sonnet-4-6":          true,
		"claude-opus-4-7":            true,
		"claude-sonnet-5":            true,
		"claude-sonnet-4-5":          false,
		"claude-sonnet-4-5-20250929": false,
		"claude-sonnet-4-20250514":   false,
		"claude-3-7-sonnet-latest":   false,
		"claude-opus-4-1":            false,
	} {
		if got := adaptive(model); got != want {
			t.Errorf("adaptive(%q) = %v, want %v", model, got, want)
		}
	}
	for _, c := range []struct {
		model  string
		budget int
		want   string
	}{
		{"claude-opus-4-6", 2048, "low"},
		{"claude-opus-4-6", 8192, "medium"},
		{"claude-opus-4-6", 16384, "high"},
		{"claude-opus-4-6", 32000, "max"},
		{"claude-sonnet-4-6", 32000, "high"},
	} {
		if got := effort(c.model, c.budget); got != c.want {
			t.Errorf("effort(%q, %d) = %q, want %q", c.model, c.budget, got, c.want)
		}
	}
}
