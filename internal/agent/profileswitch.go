package agent

import "fmt"

// ProfileSwitch is an agent profile a live session switches to
// (session/set_agent): what of the profile applies to a running session.
type ProfileSwitch struct {
	Info ProfileInfo
	// System replaces the base system prompt ("": corvid's default).
	System string
	// Context makes the profile's instructions and seed regions for the
	// session, added to the system prompt (they replace the previous
	// profile's); nil: none.
	Context func(SessionStart) string
	// Model is the profile's provider:model ("": keep the session's).
	Model string
}

// SwitchProfile makes p the session's agent profile: its system prompt
// and instructions from the next model request on, its model, and the
// profile recorded with the session. Permission rules and limits stay the
// launch's: they are fixed for the process.
func (s *Session) SwitchProfile(p ProfileSwitch) error {
	if p.Model != "" && p.Model != s.Controls().Model {
		if err := s.SetModel(p.Model); err != nil {
			return fmt.Errorf("agent %s: %w", p.Info.Name, err)
		}
	}
	info := p.Info
	if err := s.settings.commit(func(v *savedSettings) error {
		v.profile = &info
		return nil
	}); err != nil {
		return fmt.Errorf("agent %s: %w", p.Info.Name, err)
	}
	var extra string
	if p.Context != nil {
		extra = p.Context(s.sessionStart())
	}
	b := s.toolbox
	b.mu.Lock()
	b.base, b.extra = p.System, extra
	b.mu.Unlock()
	b.discover()
	return nil
}
