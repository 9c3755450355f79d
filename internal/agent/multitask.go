package agent

// Multitask is CodeBuddy's session-level overlay (docs/codebuddy.md): a
// boolean stored with the session, independent of the permission mode and
// the agent profile. With it on, the task tool's background: true starts a
// detached worker (worker.go); turning it off stops no running worker.

// Multitask reports whether the session's multitask overlay is on.
func (s *Session) Multitask() bool {
	s.settings.mu.Lock()
	defer s.settings.mu.Unlock()
	return s.settings.multitask
}

// SetMultitask turns the overlay on or off and saves it with the session;
// it reports whether the value was already so. A store that fails the
// write leaves the overlay as it was and returns its error.
func (s *Session) SetMultitask(on bool) (already bool, err error) {
	err = s.settings.commit(func(v *savedSettings) error {
		already = v.multitask == on
		v.multitask = on
		return nil
	})
	return already, err
}

// MultitaskUnavailable says why the session cannot have the overlay ("":
// it can). Sessions a front end serves are top-level ones; sub-agent
// sessions are never offered it.
func (s *Session) MultitaskUnavailable() string {
	if s.agent.cfg.NoBackgroundTasks {
		return "background tasks are disabled (CORVID_DISABLE_BACKGROUND_TASKS is set)"
	}
	return ""
}

// SetMultitask for a slash command: the same checks and stamp as the
// protocol's writes, then the front end hears that the options changed.
func (h commandHost) SetMultitask(want *bool) (on, already bool, refused string) {
	s := h.t.s
	if why := s.MultitaskUnavailable(); why != "" {
		return s.Multitask(), false, why
	}
	on = !s.Multitask()
	if want != nil {
		on = *want
	}
	already, err := s.SetMultitask(on)
	if err != nil {
		return s.Multitask(), false, userText(err)
	}
	// Not recorded: the option's state is saved with the session's
	// settings; the front end sends the whole option set.
	s.ShowAll(Event{Kind: EventConfig})
	return on, already, ""
}

// HasChildSession says whether id names one of this session's sub-agent or
// worker sessions (a child session, running or finished): such a session
// never has the overlay of its own (CodeBuddy's "worker / child session").
func (s *Session) HasChildSession(id string) bool {
	t := s.sub.team
	if t == nil || id == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.members {
		if m.SessionID == id {
			return true
		}
	}
	return false
}
