package agent

import (
	"errors"
	"fmt"

	"github.com/corvid-agent/corvid/internal/usererr"
)

// The agent's failures that a front end maps to a protocol code. Each is
// returned inside a *usererr.Error worded for the user, so front ends show
// its Message and Details and never an error's raw text.
var (
	// ErrStore marks a failure of the session store.
	ErrStore = errors.New("session store")
	// ErrProjectConfig marks a project configuration that cannot be used.
	ErrProjectConfig = errors.New("project configuration")
	// ErrInvalidValue marks an unknown option or value.
	ErrInvalidValue = errors.New("invalid value")
	// ErrBusyElsewhere means another corvid process is running a turn of
	// the same session.
	ErrBusyElsewhere = errors.New("session is busy in another corvid process")
	// ErrDeletedElsewhere means the session was deleted (by another
	// process) while a turn of it ran.
	ErrDeletedElsewhere = errors.New("session deleted while its turn ran")
)

// storeFailure words a failure of the session store. The store builds its
// text from its own sentences and SQLite's result text (naming the
// database file and the condition, such as a full disk), which the user
// needs to act on; doing says what corvid was doing, for the log.
func storeFailure(doing string, err error) error {
	return &usererr.Error{
		Message: "The session store failed: " + err.Error(),
		Err:     fmt.Errorf("%w: %s: %w", ErrStore, doing, err),
	}
}

// errStoreFault ends a turn whose events could not be committed.
var errStoreFault = &usererr.Error{
	Message: "The session store failed: events of this turn could not be saved (is the disk full, or the database server unreachable?), so the turn was stopped; see the log for the database error",
	Err:     ErrStore,
}

// errDeletedElsewhere ends a turn whose session was deleted under it.
var errDeletedElsewhere = &usererr.Error{
	Message: "This session was deleted elsewhere (session/delete from another corvid process) while this turn ran, so the turn was stopped",
	Details: "nothing more of this session is saved; start a new session to go on",
	Err:     ErrDeletedElsewhere,
}

// projectConfigFailure words a project configuration that cannot be used;
// config's text names the file and the problem.
func projectConfigFailure(err error) error {
	return &usererr.Error{
		Message: "The project configuration cannot be used: " + err.Error(),
		Err:     fmt.Errorf("%w: %w", ErrProjectConfig, err),
	}
}

// invalidValue rejects an option or value; details say which and what is
// allowed.
func invalidValue(format string, args ...any) error {
	return &usererr.Error{Message: "Invalid config value", Details: fmt.Sprintf(format, args...), Err: ErrInvalidValue}
}

// userText is what the user was told of err: its user-facing message and
// details, or a pointer to the log for an internal error.
func userText(err error) string {
	u, ok := usererr.Of(err)
	switch {
	case !ok:
		return "corvid failed with an internal error; its log has the details"
	case u.Details != "":
		return u.Message + ": " + u.Details
	}
	return u.Message
}
