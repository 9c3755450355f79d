package profile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docs/agents.md teaches the profile format with one example: it must parse
// as documented, with its seed at the top level (not filed under [limits]).
func TestAgentsDocProfileExampleWorksAsWritten(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Profiles")
	if !ok {
		t.Fatal("docs/agents.md has no \"## Profiles\" section")
	}
	_, rest, ok = strings.Cut(rest, "```toml\n")
	example, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("the Profiles section has no toml example")
	}
	p, err := Load(write(t, "reviewer.toml", example))
	if err != nil {
		t.Fatalf("the example does not parse: %v\n%s", err, example)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("the example draws warnings %q", p.Warnings)
	}
	if len(p.Seeds) != 1 || p.Seeds[0].Command != "git status --short" {
		t.Errorf("the example's seed is %+v, want one command seed git status --short", p.Seeds)
	}
	if p.Name != "reviewer" || p.Model != "anthropic:claude-sonnet-4-6" || p.MaxDepth != 2 || p.MaxTurnRequests != 50 ||
		!slices.Equal(p.Allow, []string{"read", "grep", "shell(git diff *)"}) || !slices.Equal(p.Deny, []string{"delete"}) {
		t.Errorf("the example maps to %+v", p)
	}
}

// The stage model example of docs/agents.md reads as the ordered list it
// describes.
func TestAgentsDocStageModelExampleWorksAsWritten(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```toml\n[stages.main]\n")
	example, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/agents.md has no [stages.main] model example")
	}
	p, err := Load(write(t, "agent.leviath", "[stages.main]\n"+example))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"anthropic:claude-sonnet-4-6", "openai:gpt-5.4-mini"}; !slices.Equal(p.Models, want) || !p.ModelFallback || len(p.Warnings) != 0 {
		t.Errorf("Models %q fallback %v warnings %q, want %q, true, none", p.Models, p.ModelFallback, p.Warnings, want)
	}
}
