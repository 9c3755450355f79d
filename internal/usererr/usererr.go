// Package usererr is corvid's one error type that is safe to show a person:
// a sentence they can act on, optional specifics, and the internal cause
// (kept for errors.Is/As and the log, never shown). Front ends map it at
// their boundary (acpserver to a JSON-RPC error, print mode to stderr); any
// other error reaching a boundary is logged and replaced by a generic text.
//
// It imports nothing of corvid, so every package may use it.
package usererr

import "errors"

// Error is a failure worded for the user.
type Error struct {
	// Message is one sentence saying what went wrong and how to fix it.
	Message string
	// Details says exactly where (a path, a field); may be empty.
	Details string
	// Err is the internal cause, for errors.Is and the log.
	Err error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// New returns an Error with message and details.
func New(message, details string) *Error { return &Error{Message: message, Details: details} }

// Wrap returns an Error with message whose cause is err.
func Wrap(err error, message string) *Error { return &Error{Message: message, Err: err} }

// Shower is an error type of its own (a provider failure) that can say
// what the user should see.
type Shower interface {
	error
	UserError() *Error
}

// Of returns the outermost user-facing error in err's chain: an *Error, or
// what a Shower shows.
func Of(err error) (*Error, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch v := e.(type) {
		case *Error:
			return v, true
		case Shower:
			return v.UserError(), true
		}
	}
	return nil, false
}
