package agent

import (
	"context"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Verdict is what the policy says about a call.
type Verdict int

const (
	Allow Verdict = iota
	Ask
	Deny
)

// Policy decides a call before anyone is asked.
type Policy func(t tool.Tool, p tool.Preview, env *tool.Env) (Verdict, string)

// DefaultPolicy lets reads inside the workspace roots run and asks for
// everything else.
func DefaultPolicy(_ tool.Tool, p tool.Preview, env *tool.Env) (Verdict, string) {
	switch p.Access {
	case tool.AccessNone:
		return Allow, ""
	case tool.AccessRead:
		for _, path := range p.Paths {
			if !env.InRoots(path) {
				return Ask, "reads outside the workspace"
			}
		}
		return Allow, ""
	}
	return Ask, ""
}

// Answer is the user's choice on a permission request.
type Answer int

const (
	RejectOnce Answer = iota
	AllowOnce
	AllowAlways
	RejectAlways
)

// Allowed reports whether the answer lets the call run.
func (a Answer) Allowed() bool { return a == AllowOnce || a == AllowAlways }

// FrontEnd receives a session's events and answers its questions.
type FrontEnd interface {
	// Emit delivers one event. Calls are made in order from the turn's
	// goroutine; the front end must not reorder them.
	Emit(ev Event)
	// RequestPermission asks the user about call (its full state). It
	// returns RejectOnce if ctx ends, the user cancels, or the front end
	// cannot ask. It must never answer Allow by itself.
	RequestPermission(ctx context.Context, call ToolCall) (Answer, error)
}
