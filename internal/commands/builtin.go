package commands

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
)

// Host is the session a built-in command runs in: what its handler may read
// and do. The agent implements it for the turn that runs the command.
type Host interface {
	// Say tells the user something in the conversation (it is recorded).
	Say(text string)
	// ClearContext empties the model context; the displayed and stored
	// history stays.
	ClearContext()
	// Compact summarises the older part of the model context, steered by
	// focus, and tells the user.
	Compact(focus string) error
	// Cwd is the session's working directory.
	Cwd() string
	// Menu lists the session's slash commands and skills (for /help).
	Menu() ([]Command, []Skill)
	// Usage is the session's model, context and spending so far.
	Usage() Usage
}

// Usage is what /status and /cost report.
type Usage struct {
	Model         string
	ContextUsed   int64 // tokens in context after the last response
	ContextWindow int64
	Turns         int
	Tokens        llm.Usage // every response of the session, summed
	CostUSD       float64
	CostKnown     bool // the model's prices are known
}

// Builtin is a command corvid executes itself: its menu entry and its
// handler.
type Builtin struct {
	Command
	// Run executes the command with its arguments. A non-empty prompt is
	// sent to the model in place of the command's text; "" means the
	// command was done without the model.
	Run func(h Host, args string) (prompt string, err error)
}

// Names of the built-in commands.
const (
	Compact = "compact"
	Clear   = "clear"
	Init    = "init"
	Review  = "review"
	Help    = "help"
	Status  = "status"
	Cost    = "cost"
)

// Builtins lists the commands corvid executes itself, in menu order.
func Builtins() []Builtin {
	return []Builtin{
		{Command{Name: Compact, Description: "Summarise the conversation so far to free context, optionally focused on a topic", ArgumentHint: "focus", Source: SourceBuiltin}, runCompact},
		{Command{Name: Clear, Description: "Start over with an empty conversation", Source: SourceBuiltin}, runClear},
		{Command{Name: Init, Description: "Write an AGENTS.md describing this project for future sessions", Source: SourceBuiltin}, runInit},
		{Command{Name: Review, Description: "Review the uncommitted changes", ArgumentHint: "focus", Source: SourceBuiltin}, runReview},
		{Command{Name: Help, Description: "List the available commands and skills", Source: SourceBuiltin}, runHelp},
		{Command{Name: Status, Description: "Show the model, context use, tokens and cost of this session", Source: SourceBuiltin}, runStatus},
		{Command{Name: Cost, Description: "Show the tokens and cost of this session", Source: SourceBuiltin}, runCost},
	}
}

// LookupBuiltin returns the built-in command called name.
func LookupBuiltin(name string) (Builtin, bool) {
	for _, b := range Builtins() {
		if b.Name == name {
			return b, true
		}
	}
	return Builtin{}, false
}

// IsBuiltin reports whether name is one of the built-in commands.
func IsBuiltin(name string) bool {
	_, ok := LookupBuiltin(name)
	return ok
}

func runCompact(h Host, focus string) (string, error) { return "", h.Compact(focus) }

func runClear(h Host, _ string) (string, error) {
	h.ClearContext()
	h.Say("Context cleared: the conversation starts afresh (the history stays visible and stored).")
	return "", nil
}

func runInit(h Host, _ string) (string, error) {
	return "Write an AGENTS.md file at " + h.Cwd() + "/AGENTS.md for this project, for future coding agents: what the project is, how it is laid out, how to build, test and lint it (the exact commands), the conventions the code follows, and anything surprising. Explore the repository with your read and search tools first; keep the file short and factual; if an AGENTS.md exists, improve it rather than replacing what is still true.", nil
}

func runReview(_ Host, focus string) (string, error) {
	p := "Review the uncommitted changes in this repository: run `git status` and `git diff` (and `git diff --staged`) with the shell tool, read the surrounding code where needed, and report bugs, risky changes, missing tests and style problems, most important first, with file:line references. Do not change any file."
	if strings.TrimSpace(focus) != "" {
		p += " Focus on: " + focus
	}
	return p, nil
}

func runHelp(h Host, _ string) (string, error) {
	cmds, skills := h.Menu()
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, c := range cmds {
		hint := ""
		if c.ArgumentHint != "" {
			hint = " <" + c.ArgumentHint + ">"
		}
		fmt.Fprintf(&b, "- `/%s%s` — %s\n", c.Name, hint, c.Description)
	}
	if len(skills) > 0 {
		b.WriteString("\nSkills (the model loads them when useful):\n")
		for _, sk := range skills {
			fmt.Fprintf(&b, "- %s — %s\n", sk.Name, sk.Description)
		}
	}
	h.Say(b.String())
	return "", nil
}

func runStatus(h Host, _ string) (string, error) {
	u := h.Usage()
	var b strings.Builder
	fmt.Fprintf(&b, "Model: %s\n", u.Model)
	if u.ContextWindow > 0 {
		fmt.Fprintf(&b, "Context: %s of %s tokens (%d%%)\n", thousands(u.ContextUsed), thousands(u.ContextWindow), u.ContextUsed*100/u.ContextWindow)
	} else {
		fmt.Fprintf(&b, "Context: %s tokens\n", thousands(u.ContextUsed))
	}
	fmt.Fprintf(&b, "Turns: %d\n", u.Turns)
	writeSpending(&b, u)
	h.Say(b.String())
	return "", nil
}

func runCost(h Host, _ string) (string, error) {
	var b strings.Builder
	writeSpending(&b, h.Usage())
	h.Say(b.String())
	return "", nil
}

// writeSpending writes the token and cost lines of /status and /cost.
func writeSpending(b *strings.Builder, u Usage) {
	t := u.Tokens
	fmt.Fprintf(b, "Tokens: %s input, %s output, %s cache reads, %s cache writes\n",
		thousands(t.InputTokens), thousands(t.OutputTokens), thousands(t.CacheReadTokens), thousands(t.CacheWriteTokens))
	if u.CostKnown {
		fmt.Fprintf(b, "Cost: $%.4f\n", u.CostUSD)
	} else {
		fmt.Fprintf(b, "Cost: unknown (corvid has no prices for %s)\n", u.Model)
	}
}

// thousands writes n with comma separators (12,345).
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
