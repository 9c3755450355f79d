package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/catalog"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/store"
)

// ModelChoice is a model a session may switch to.
type ModelChoice struct {
	ID          string // provider:model
	Name        string
	Description string
}

// Thought levels, mapped to a thinking budget in tokens.
var thoughtLevels = []struct {
	ID, Name string
	Budget   int
}{
	{"off", "Off", 0},
	{"low", "Low", 2048},
	{"medium", "Medium", 8192},
	{"high", "High", 16384},
	{"max", "Max", 32000},
}

// ModeInfo describes a permission mode to the user.
type ModeInfo struct {
	ID, Name, Description string
}

// Modes lists the session modes in display order.
var Modes = []ModeInfo{
	{string(permission.ModeAsk), "Ask", "Every tool call asks first."},
	{string(permission.ModeDefault), "Default", "Reads in the workspace run; everything else asks."},
	{string(permission.ModeEdit), "Edit", "Reads and edits in the workspace run; shell and network ask."},
	{string(permission.ModePlan), "Plan", "Read-only: corvid plans, and writes and shell are refused."},
	{string(permission.ModeYolo), "Yolo", "Everything runs without asking, except configured denies."},
	{string(permission.ModeDeny), "Deny", "Every tool call is refused."},
}

// ErrInvalidValue is returned for an unknown option or value; the message
// says which and what is allowed.
var ErrInvalidValue = errors.New("invalid value")

// Controls is a session's current settings, for the editor's pickers.
type Controls struct {
	Mode          string
	Model         string // provider:model
	Models        []ModelChoice
	Reasoning     bool   // the model supports a thought level
	ThoughtLevel  string // off, low, medium, high, max
	Tiers         []int64
	ContextWindow int64        // the selected tier (or the model's window)
	Agent         *ProfileInfo // the session's agent profile; nil: the default agent
}

// ProfileInfo is what a session keeps of its agent profile: the name and
// the maximum sub-agent depth (0: the default).
type ProfileInfo struct {
	Name     string `json:"name"`
	MaxDepth int    `json:"maxDepth"`
}

// StoredProfile returns the agent profile recorded with a stored session,
// or nil when it was created without one.
func StoredProfile(meta store.Session) *ProfileInfo {
	var sc storedControls
	if len(meta.Config) == 0 || json.Unmarshal(meta.Config, &sc) != nil {
		return nil
	}
	return sc.Agent
}

// ThoughtLevels lists the thought level ids and names.
func ThoughtLevels() [][2]string {
	out := make([][2]string, len(thoughtLevels))
	for i, l := range thoughtLevels {
		out[i] = [2]string{l.ID, l.Name}
	}
	return out
}

// Controls returns the session's current settings.
func (s *Session) Controls() Controls {
	s.mu.Lock()
	info := s.model.Info()
	s.mu.Unlock()
	// The choices may consult credentials (keyring): not under s.mu.
	choices := s.agent.modelChoices(info)
	s.mu.Lock()
	defer s.mu.Unlock()
	info = s.model.Info()
	c := Controls{
		Mode:          string(s.modeOrDefault()),
		Model:         info.ID,
		Models:        choices,
		Reasoning:     info.Reasoning,
		ThoughtLevel:  s.thought,
		Tiers:         s.tiers(),
		ContextWindow: s.window(),
		Agent:         s.profile,
	}
	return c
}

func (s *Session) modeOrDefault() permission.Mode {
	if s.mode == "" {
		return permission.ModeDefault
	}
	return s.mode
}

// tiers returns the model's selectable context windows (guarded by s.mu).
func (s *Session) tiers() []int64 {
	info := s.model.Info()
	p, m := llm.ParseModelID(info.ID)
	t := catalog.Lookup(p, m).Tiers()
	if len(t) == 1 && info.ContextWindow > 0 {
		return []int64{info.ContextWindow}
	}
	return t
}

// window is the context window in effect (guarded by s.mu).
func (s *Session) window() int64 {
	if s.windowTier > 0 {
		return s.windowTier
	}
	return s.model.Info().ContextWindow
}

func (s *Session) thinkingBudget() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.model.Info().Reasoning {
		return 0
	}
	for _, l := range thoughtLevels {
		if l.ID == s.thought {
			return l.Budget
		}
	}
	return 0
}

func (a *Agent) modelChoices(current llm.ModelInfo) []ModelChoice {
	var out []ModelChoice
	if a.cfg.Models != nil {
		out = slices.Clone(a.cfg.Models())
	}
	if !slices.ContainsFunc(out, func(m ModelChoice) bool { return m.ID == current.ID }) {
		out = append([]ModelChoice{{ID: current.ID, Name: current.ID}}, out...)
	}
	return out
}

// SetMode changes the permission mode.
func (s *Session) SetMode(id string) error {
	if !slices.ContainsFunc(Modes, func(m ModeInfo) bool { return m.ID == id }) {
		return fmt.Errorf("%w: unknown mode %q (modes: ask, default, edit, plan, yolo, deny)", ErrInvalidValue, id)
	}
	s.mu.Lock()
	s.mode = permission.Mode(id)
	s.mu.Unlock()
	s.saveControls()
	return nil
}

// SetModel switches the session's model.
func (s *Session) SetModel(id string) error {
	s.mu.Lock()
	current := s.model.Info()
	choices := s.agent.modelChoices(current)
	s.mu.Unlock()
	if id == current.ID {
		return nil
	}
	if !slices.ContainsFunc(choices, func(m ModelChoice) bool { return m.ID == id }) || s.agent.cfg.OpenModel == nil {
		return fmt.Errorf("%w: model %q is not available with the credentials at hand", ErrInvalidValue, id)
	}
	m, err := s.agent.cfg.OpenModel(id)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidValue, err)
	}
	s.mu.Lock()
	s.model = m
	s.windowTier = 0 // tiers belong to a model
	s.env.Images = m.Info().Images
	s.mu.Unlock()
	s.agent.windows.Delete(s.ID)
	s.saveControls()
	return nil
}

// SetThoughtLevel sets how much the model thinks.
func (s *Session) SetThoughtLevel(id string) error {
	if !slices.ContainsFunc(thoughtLevels, func(l struct {
		ID, Name string
		Budget   int
	}) bool {
		return l.ID == id
	}) {
		return fmt.Errorf("%w: unknown thought level %q (levels: off, low, medium, high, max)", ErrInvalidValue, id)
	}
	s.mu.Lock()
	reasoning := s.model.Info().Reasoning
	if reasoning {
		s.thought = id
	}
	s.mu.Unlock()
	if !reasoning {
		return fmt.Errorf("%w: the current model does not support reasoning", ErrInvalidValue)
	}
	s.saveControls()
	return nil
}

// SetContextWindow selects one of the model's context tiers, by its token
// count as a decimal string.
func (s *Session) SetContextWindow(value string) error {
	n, err := strconv.ParseInt(value, 10, 64)
	s.mu.Lock()
	tiers := s.tiers()
	s.mu.Unlock()
	if err != nil || !slices.Contains(tiers, n) {
		return fmt.Errorf("%w: context window %q is not one of the model's tiers %v", ErrInvalidValue, value, tiers)
	}
	if len(tiers) < 2 {
		return fmt.Errorf("%w: the current model has a single context window", ErrInvalidValue)
	}
	s.mu.Lock()
	s.windowTier = n
	s.mu.Unlock()
	s.agent.windows.Store(s.ID, n)
	return nil
}

// storedControls is what the store keeps of a session's settings (the
// context window is deliberately not kept: it reverts in a new process).
type storedControls struct {
	ThoughtLevel string       `json:"thoughtLevel,omitempty"`
	Agent        *ProfileInfo `json:"agent,omitempty"`
}

func (s *Session) saveControls() {
	if s.store == nil {
		return
	}
	s.mu.Lock()
	mode, model := string(s.modeOrDefault()), s.model.Info().ID
	cfg, _ := json.Marshal(storedControls{ThoughtLevel: s.thought, Agent: s.profile})
	s.mu.Unlock()
	err := s.store.UpdateSession(context.Background(), s.ID, func(ss *store.Session) {
		ss.Mode, ss.Model, ss.Config = mode, model, cfg
	})
	if err != nil {
		s.agent.cfg.Logger.Error("save session settings", "session", s.ID, "err", err)
	}
}

// restoreControls applies stored settings on load.
func (s *Session) restoreControls(meta store.Session) {
	if meta.Mode != "" {
		s.mode = permission.Mode(meta.Mode)
	}
	var sc storedControls
	if len(meta.Config) > 0 && json.Unmarshal(meta.Config, &sc) == nil {
		if sc.ThoughtLevel != "" {
			s.thought = sc.ThoughtLevel
		}
		// A session keeps the profile it was created with, whatever this
		// process was launched with.
		if sc.Agent != nil {
			s.profile = sc.Agent
		}
	}
	if meta.Model != "" && meta.Model != s.model.Info().ID && s.agent.cfg.OpenModel != nil &&
		slices.ContainsFunc(s.agent.modelChoices(s.model.Info()), func(m ModelChoice) bool { return m.ID == meta.Model }) {
		if m, err := s.agent.cfg.OpenModel(meta.Model); err == nil {
			s.model = m
			s.env.Images = m.Info().Images
		}
	}
	if v, ok := s.agent.windows.Load(s.ID); ok && slices.Contains(s.tiers(), v.(int64)) {
		s.windowTier = v.(int64)
	}
}

// costOf prices a response with the catalog; ok is false when unknown.
func costOf(info llm.ModelInfo, u llm.Usage) (float64, bool) {
	p, m := llm.ParseModelID(info.ID)
	return catalog.Lookup(p, m).Cost(u)
}
