package commands

import (
	"errors"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
)

// fakeHost records what a built-in's handler did.
type fakeHost struct {
	said       []string
	cleared    bool
	compacted  *string
	compactErr error
	usage      Usage
}

func (h *fakeHost) Usage() Usage { return h.usage }

func (h *fakeHost) Say(text string) { h.said = append(h.said, text) }
func (h *fakeHost) ClearContext()   { h.cleared = true }
func (h *fakeHost) Compact(focus string) error {
	h.compacted = &focus
	return h.compactErr
}
func (h *fakeHost) Cwd() string { return "/work/proj" }
func (h *fakeHost) Menu() ([]Command, []Skill) {
	return []Command{{Name: "compact", Description: "Summarise", ArgumentHint: "focus"}, {Name: "git:commit", Description: "Commit"}},
		[]Skill{{Name: "pdf", Description: "Read PDFs"}}
}

func run(t *testing.T, name, args string, h *fakeHost) (string, error) {
	t.Helper()
	b, ok := LookupBuiltin(name)
	if !ok {
		t.Fatalf("no built-in %q", name)
	}
	return b.Run(h, args)
}

func TestEveryBuiltinHasAHandlerAndOnlyBuiltinsAreFound(t *testing.T) {
	for _, b := range Builtins() {
		if b.Run == nil {
			t.Errorf("/%s has no handler", b.Name)
		}
	}
	if _, ok := LookupBuiltin("git:commit"); ok || IsBuiltin("nope") || !IsBuiltin(Help) {
		t.Error("LookupBuiltin/IsBuiltin found a command that is not built in, or missed one that is")
	}
}

func TestClearEmptiesTheContextAndSaysSo(t *testing.T) {
	h := &fakeHost{}
	prompt, err := run(t, Clear, "", h)
	if prompt != "" || err != nil || !h.cleared || len(h.said) != 1 || !strings.HasPrefix(h.said[0], "Context cleared") {
		t.Errorf("clear: prompt %q err %v cleared %v said %q", prompt, err, h.cleared, h.said)
	}
}

func TestCompactPassesItsFocusAndItsFailure(t *testing.T) {
	h := &fakeHost{compactErr: errors.New("model down")}
	prompt, err := run(t, Compact, "the API", h)
	if prompt != "" || err != h.compactErr || h.compacted == nil || *h.compacted != "the API" {
		t.Errorf("compact: prompt %q err %v focus %v", prompt, err, h.compacted)
	}
}

func TestInitAndReviewBecomePromptsForTheModel(t *testing.T) {
	h := &fakeHost{}
	p, _ := run(t, Init, "", h)
	if !strings.Contains(p, "/work/proj/AGENTS.md") {
		t.Errorf("init prompt does not name the file in the cwd: %q", p)
	}
	p, _ = run(t, Review, "", h)
	if !strings.Contains(p, "git diff") || strings.Contains(p, "Focus on") {
		t.Errorf("review prompt = %q", p)
	}
	p, _ = run(t, Review, "error handling", h)
	if !strings.HasSuffix(p, " Focus on: error handling") || len(h.said) != 0 {
		t.Errorf("review with focus = %q (said %q)", p, h.said)
	}
}

func TestHelpListsCommandsWithHintsAndSkills(t *testing.T) {
	h := &fakeHost{}
	if p, err := run(t, Help, "", h); p != "" || err != nil {
		t.Fatalf("help: %q %v", p, err)
	}
	want := "Commands:\n- `/compact <focus>` — Summarise\n- `/git:commit` — Commit\n\nSkills (the model loads them when useful):\n- pdf — Read PDFs\n"
	if len(h.said) != 1 || h.said[0] != want {
		t.Errorf("help said %q, want %q", h.said, want)
	}
}

func TestStatusAndCostReportTheSessionsSpending(t *testing.T) {
	h := &fakeHost{usage: Usage{Model: "anthropic:claude-sonnet-4-5", ContextUsed: 12345, ContextWindow: 200000, Turns: 3,
		Tokens: llm.Usage{InputTokens: 1234567, OutputTokens: 890, CacheReadTokens: 45000, CacheWriteTokens: 7}, CostUSD: 0.12345, CostKnown: true}}
	if p, err := run(t, Status, "", h); p != "" || err != nil {
		t.Fatalf("status: prompt %q err %v", p, err)
	}
	want := []string{"Model: anthropic:claude-sonnet-4-5", "Context: 12,345 of 200,000 tokens (6%)", "Turns: 3",
		"Tokens: 1,234,567 input, 890 output, 45,000 cache reads, 7 cache writes", "Cost: $0.1235"}
	if len(h.said) != 1 || strings.Split(strings.TrimSpace(h.said[0]), "\n")[0] != want[0] {
		t.Fatalf("status said %q", h.said)
	}
	if got := strings.Split(strings.TrimSpace(h.said[0]), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("status lines\n got %q\nwant %q", got, want)
	}
	h = &fakeHost{usage: Usage{Model: "ollama:qwen3", Tokens: llm.Usage{InputTokens: 10, OutputTokens: 2}}}
	run(t, Cost, "", h)
	if len(h.said) != 1 || h.said[0] != "Tokens: 10 input, 2 output, 0 cache reads, 0 cache writes\nCost: unknown (corvid has no prices for ollama:qwen3)\n" {
		t.Errorf("cost without prices said %q", h.said)
	}
}
