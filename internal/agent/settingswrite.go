package agent

import (
	"context"
	"encoding/json"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/store"
)

// Durable before visible holds for settings too (ARCHITECTURE.md §3): a
// write (mode, model, thought level, profile, multitask, codeMode) edits a
// copy of the settings, the store records the copy, and only then does the
// session take it. A store that fails the write changes nothing: the
// session keeps its settings and the caller gets the store's error, so a
// front end neither answers success nor sends a config_option_update.

// savedSettings is a copy of what a settings write may change.
type savedSettings struct {
	model      llm.Model
	mode       permission.Mode
	thought    string
	windowTier int64 // not stored; a model switch resets it
	profile    *ProfileInfo
	multitask  bool
	codeMode   string
}

// savedLocked copies the settings (guarded by s.mu).
func (s *settings) savedLocked() savedSettings {
	return savedSettings{model: s.model, mode: s.mode, thought: s.thought, windowTier: s.windowTier,
		profile: s.profile, multitask: s.multitask, codeMode: s.codeMode}
}

// applyLocked makes v the settings (guarded by s.mu).
func (s *settings) applyLocked(v savedSettings) {
	s.model, s.mode, s.thought, s.windowTier = v.model, v.mode, v.thought, v.windowTier
	s.profile, s.multitask, s.codeMode = v.profile, v.multitask, v.codeMode
	s.version++
}

// commit runs change on a copy of the settings; unless it fails, the copy
// is stored and then taken. No lock is held while change runs or the store
// writes: when another write was taken meanwhile (version moved), change
// runs again on top of it, so the session always holds what the store
// holds last. A store failure is returned as a user error.
func (s *settings) commit(change func(*savedSettings) error) error {
	for {
		s.mu.Lock()
		next, version := s.savedLocked(), s.version
		s.mu.Unlock()
		if err := change(&next); err != nil {
			return err
		}
		if err := s.persist(next); err != nil {
			return storeFailure("save session settings", err)
		}
		s.mu.Lock()
		if s.version == version {
			s.applyLocked(next)
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
	}
}

// persist writes v as the session's stored settings (nothing for a session
// that is not stored: a sub-agent's).
func (s *settings) persist(v savedSettings) error {
	if s.store == nil {
		return nil
	}
	mode := v.mode
	if mode == "" {
		mode = permission.ModeDefault
	}
	sc := storedControls{ThoughtLevel: v.thought, Agent: v.profile, Multitask: v.multitask}
	sc.CodeMode, sc.MainAgent = codeModeMarkers(v.codeMode)
	model := v.model.Info().ID
	return s.store.UpdateSession(context.Background(), s.id, func(ss *store.Session) {
		c := sc
		c.Owner = storedOwner(ss.Config)
		cfg, _ := json.Marshal(c)
		ss.Mode, ss.Model, ss.Config = string(mode), model, cfg
	})
}
