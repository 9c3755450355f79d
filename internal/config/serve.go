package config

import "fmt"

// The daemon's settings (`corvid serve`, docs/serve.md), user config only:
// a project file is read per session, and these are the daemon's.

// OnDisconnect values: what a client that goes away does to the turns it
// started.
const (
	OnDisconnectContinue = "continue"
	OnDisconnectCancel   = "cancel"
)

// mergeServe lays o's daemon settings over f.
func (f *File) mergeServe(o *File, from string) error {
	if o.OnDisconnect == "" {
		return nil
	}
	if o.OnDisconnect != OnDisconnectContinue && o.OnDisconnect != OnDisconnectCancel {
		return fmt.Errorf("on_disconnect must be %q or %q, not %q", OnDisconnectContinue, OnDisconnectCancel, o.OnDisconnect)
	}
	if from != "" {
		f.Ignored = append(f.Ignored, fmt.Sprintf("on_disconnect in %s (on_disconnect is read from the user config only)", from))
		return nil
	}
	f.OnDisconnect = o.OnDisconnect
	return nil
}
