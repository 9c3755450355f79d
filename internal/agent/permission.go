package agent

import (
	"context"

	"github.com/corvid-agent/corvid/internal/permission"
)

// Permissions is the operator's and the configuration's say over tool calls.
type Permissions struct {
	Rules *permission.Rules // configured allow/ask/deny rules; nil for none
	Yolo  bool              // --yolo: everything runs except denies
	Allow []string          // --allow, in rule syntax
	Mode  permission.Mode   // the default mode of new sessions
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
