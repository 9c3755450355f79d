// Package permission decides whether a tool call runs, asks the user, or
// is refused. Start with Decide: it combines the session's mode, the
// configured rules (Rules, parsed from allow/ask/deny lists), the answers
// the user gave "always" to (Memory), and the operator's launch flags.
//
// The invariants: a configured deny is never lifted, not even by yolo; only
// a human answer, a rule or an operator flag allows something the default
// policy would ask about; reads inside the session's roots need no question.
package permission

import (
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Action is a decision's verdict.
type Action string

const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// Decision is a verdict with the reason behind it, for logs and for the
// message the model gets when a call is refused.
type Decision struct {
	Action Action
	Reason string
}

// Mode is the session's permission mode.
type Mode string

const (
	// ModeAsk asks before every call that needs any access.
	ModeAsk Mode = "ask"
	// ModeDefault runs reads inside the roots and asks for the rest.
	ModeDefault Mode = "default"
	// ModeEdit also runs writes, edits and moves inside the roots
	// (deletes still ask).
	ModeEdit Mode = "edit"
	// ModePlan refuses writes, shell and network; reads work as in default.
	ModePlan Mode = "plan"
	// ModeYolo runs everything except what a rule denies.
	ModeYolo Mode = "yolo"
	// ModeDeny refuses every call (kage's deny mode).
	ModeDeny Mode = "deny"
)

// Modes lists the modes in the order a client should show them.
var Modes = []Mode{ModeAsk, ModeDefault, ModeEdit, ModePlan, ModeYolo, ModeDeny}

// Input is everything Decide looks at for one call.
type Input struct {
	Tool    string       // the tool's name, e.g. "shell" or an MCP tool's name
	Preview tool.Preview // Access, Paths, Command, URL, Kind
	Roots   []string     // the session's roots (cwd first)
	Mode    Mode         // "" means ModeDefault
	Rules   *Rules       // configured rules; nil for none
	Memory  *Memory      // the session's "always" answers; nil for none
	// Yolo is the operator's --yolo flag: everything runs except denies.
	Yolo bool
	// Allow is the operator's --allow list, in rule syntax ("read",
	// "shell(go test*)"); entries that do not parse are ignored, so
	// validate them with ParseRule at launch.
	Allow []string
}

// Decide returns what to do with a call. The order, first match wins:
//
//  1. a deny rule → Deny
//  2. a "reject always" answer → Deny; then deny mode (kage's) → Deny,
//     whatever the call, the allow rules or an "allow always" say
//  3. plan mode and the call writes, executes or uses the network → Deny
//     (except a call to a tool that declares itself read-only, e.g. an
//     MCP tool's readOnlyHint: it goes on to the rules below, and asks)
//  4. the call needs no access (e.g. the todo list) → Allow
//  5. ask mode → Ask
//  6. yolo (flag or mode) → Allow; otherwise a change to a protected path
//     (.corvid/, .git/, shell start-up files, ~/.ssh/; protected.go) → Ask
//  7. an "allow always" answer → Allow
//  8. an ask rule → Ask
//  9. an allow rule, or the operator's --allow list → Allow
//  10. the mode's default policy: reads inside the roots run (and, in edit
//     mode, writes other than deletes inside the roots) → Allow
//  11. → Ask
func Decide(in Input) Decision {
	sc := scope{roots: in.Roots}
	mode := in.Mode
	if mode == "" {
		mode = ModeDefault
	}
	if d, ok := decideFirm(in, mode, sc); ok {
		return d
	}
	if d, ok := decideByRules(in, sc); ok {
		return d
	}
	return modeDefault(in.Preview, mode, sc)
}

// decideFirm is steps 1 to 6 of Decide: what no rule or answer overrides.
func decideFirm(in Input, mode Mode, sc scope) (Decision, bool) {
	pv := in.Preview
	if r, ok := findRule(in.Rules.denies(), in.Tool, pv, sc, false); ok {
		return Decision{Deny, fmt.Sprintf("denied by the rule %q", r)}, true
	}
	if in.Memory.matches(in.Tool, pv, sc, Deny) {
		return Decision{Deny, "the user chose to always reject this"}, true
	}
	if mode == ModeDeny {
		return Decision{Deny, "deny mode: every call is refused"}, true
	}
	if mode == ModePlan && !(pv.DeclaredReadOnly && pv.Access == tool.AccessExecute) {
		switch pv.Access {
		case tool.AccessWrite, tool.AccessExecute, tool.AccessNetwork:
			return Decision{Deny, fmt.Sprintf("plan mode: %s calls are not allowed while planning", pv.Access)}, true
		}
	}
	if pv.Access == tool.AccessNone {
		return Decision{Allow, "needs no access"}, true
	}
	if mode == ModeAsk {
		return Decision{Ask, "ask mode: every call asks"}, true
	}
	if in.Yolo || mode == ModeYolo {
		return Decision{Allow, "yolo: everything not denied runs"}, true
	}
	if pv.Access == tool.AccessWrite {
		if p, why, ok := protectedPath(pv.Paths); ok {
			return Decision{Ask, fmt.Sprintf("%s is protected (%s): changes to it always ask", p, why)}, true
		}
	}
	return Decision{}, false
}

// decideByRules is steps 7 to 9 of Decide: answers and rules.
func decideByRules(in Input, sc scope) (Decision, bool) {
	pv := in.Preview
	if in.Memory.matches(in.Tool, pv, sc, Allow) {
		return Decision{Allow, "the user chose to always allow this"}, true
	}
	if r, ok := findRule(in.Rules.asks(), in.Tool, pv, sc, false); ok {
		return Decision{Ask, fmt.Sprintf("the rule %q asks", r)}, true
	}
	allows := in.Rules.allows()
	for _, a := range in.Allow {
		if r, err := ParseRule(a); err == nil {
			r.raw = "--allow " + a
			allows = append(allows, r)
		}
	}
	if used, ok := findAllow(allows, in.Tool, pv, sc); ok {
		return Decision{Allow, "allowed by " + quoteRules(used)}, true
	}
	return Decision{}, false
}

// modeDefault is steps 10 and 11 of Decide: the mode's default policy.
func modeDefault(pv tool.Preview, mode Mode, sc scope) Decision {
	inside := sc.allInside(pv.Paths)
	switch pv.Access {
	case tool.AccessRead:
		if inside {
			return Decision{Allow, "reads inside the workspace run"}
		}
		return Decision{Ask, "reads outside the workspace ask"}
	case tool.AccessWrite:
		if mode == ModeEdit && inside && len(pv.Paths) > 0 && pv.Kind != tool.KindDelete {
			return Decision{Allow, "edit mode: changes inside the workspace run"}
		}
		if !inside {
			return Decision{Ask, "changes outside the workspace ask"}
		}
		return Decision{Ask, "changes ask"}
	case tool.AccessExecute:
		return Decision{Ask, "commands ask"}
	case tool.AccessNetwork:
		return Decision{Ask, "network access asks"}
	}
	return Decision{Ask, "this tool asks"}
}

// scope is the session's roots, with containment as tool.Env sees it
// (symbolic links resolved, so neither ".." nor a link escapes).
type scope struct{ roots []string }

func (s scope) inside(p string) bool {
	env := tool.Env{Roots: s.roots}
	return env.InRoots(p)
}

func (s scope) allInside(paths []string) bool {
	for _, p := range paths {
		if !s.inside(p) {
			return false
		}
	}
	return true
}

func quoteRules(rs []Rule) string {
	q := make([]string, len(rs))
	for i, r := range rs {
		q[i] = fmt.Sprintf("%q", r.String())
	}
	if len(q) == 1 {
		return "the rule " + q[0]
	}
	return "the rules " + strings.Join(q, ", ")
}
