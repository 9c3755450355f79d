package commands

import (
	"fmt"
	"strings"
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
	// SetMultitask sets the session's multitask overlay (want nil:
	// toggle), as session/set_multitask does; it returns the new state,
	// whether it already was so, and why it cannot change (not "": refused).
	SetMultitask(want *bool) (on, already bool, refused string)
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
	// Multitask is CodeBuddy's /multitask (docs/codebuddy.md).
	Multitask = "multitask"
)

// Builtins lists the commands corvid executes itself, in menu order.
func Builtins() []Builtin {
	return []Builtin{
		{Command{Name: Compact, Description: "Summarise the conversation so far to free context, optionally focused on a topic", ArgumentHint: "focus", Source: SourceBuiltin}, runCompact},
		{Command{Name: Clear, Description: "Start over with an empty conversation", Source: SourceBuiltin}, runClear},
		{Command{Name: Init, Description: "Write an AGENTS.md describing this project for future sessions", Source: SourceBuiltin}, runInit},
		{Command{Name: Review, Description: "Review the uncommitted changes", ArgumentHint: "focus", Source: SourceBuiltin}, runReview},
		{Command{Name: Help, Description: "List the available commands and skills", Source: SourceBuiltin}, runHelp},
		{Command{Name: Multitask, Description: "Turn the session's multitask overlay on or off (no argument: toggle)", ArgumentHint: "on|off", Source: SourceBuiltin}, runMultitask},
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
