package agent

import "context"

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

// Refusal is what a front end that cannot ask anyone (print mode) returns
// from RequestPermission: the call is refused, and Reason, which says how the
// operator could allow it, becomes the tool's failure text for the model.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }
