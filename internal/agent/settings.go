package agent

import (
	"encoding/json"
	"fmt"
	"github.com/corvid-agent/corvid/internal/usererr"
	"slices"
	"strconv"
	"sync"

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
type thoughtLevel struct {
	ID, Name string
	Budget   int
}

var thoughtLevels = []thoughtLevel{
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
	Multitask     bool         // the multitask overlay (multitask.go)
	CodeMode      string       // off or all (codemode.go)
}

// ProfileInfo is what a session keeps of its agent profile: the name and
// the maximum sub-agent depth (0: the default, unless NoSubAgents).
type ProfileInfo struct {
	Name     string `json:"name"`
	MaxDepth int    `json:"maxDepth"`
	// NoSubAgents records --max-depth 0: the session offers no task tool.
	// (MaxDepth 0 alone meant "the default" before it existed.)
	NoSubAgents bool `json:"noSubAgents,omitempty"`
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

// settings are a session's choices the editor's pickers show: model,
// permission mode, thought level, context tier and agent profile. They are
// saved with the session (except the tier: see storedControls).
type settings struct {
	agent *Agent
	id    string
	store *store.Store // nil: not persisted

	mu         sync.Mutex
	model      llm.Model
	mode       permission.Mode
	thought    string       // thought level id
	windowTier int64        // the selected context tier (0: the model's window)
	profile    *ProfileInfo // the agent profile the session was created with
	multitask  bool         // the multitask overlay (multitask.go)
	codeMode   string       // "" (never set: off), off or all; codemode.go
	version    uint64       // counts the writes taken (settingswrite.go)
}

// controls returns the current settings.
func (s *settings) controls() Controls {
	// The choices may consult credentials (keyring): not under s.mu.
	choices := s.agent.modelChoices(s.view().model.Info())
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.model.Info()
	return Controls{
		Mode:          string(s.modeOrDefault()),
		Model:         info.ID,
		Models:        choices,
		Reasoning:     info.Reasoning,
		ThoughtLevel:  s.thought,
		Tiers:         s.tiers(),
		ContextWindow: s.window(),
		Agent:         s.profile,
		Multitask:     s.multitask,
		CodeMode:      s.codeModeOrOff(),
	}
}

// settingsView is a consistent copy of the settings, taken at once.
type settingsView struct {
	model          llm.Model
	mode           permission.Mode // as set ("" until set: the gate's default)
	plan           bool
	window         int64 // the window in effect
	tier           int64 // the selected tier (0: the model's default)
	thinkingBudget int
}

func (s *settings) view() settingsView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return settingsView{model: s.model, mode: s.mode, plan: s.modeOrDefault() == permission.ModePlan,
		window: s.window(), tier: s.windowTier, thinkingBudget: s.thinkingBudget()}
}

func (s *settings) modeOrDefault() permission.Mode {
	if s.mode == "" {
		return permission.ModeDefault
	}
	return s.mode
}

// tiers returns the model's selectable context windows (guarded by s.mu).
func (s *settings) tiers() []int64 {
	info := s.model.Info()
	p, m := llm.ParseModelID(info.ID)
	t := catalog.Lookup(p, m).Tiers()
	if len(t) == 1 && info.ContextWindow > 0 {
		return []int64{info.ContextWindow}
	}
	return t
}

// window is the context window in effect (guarded by s.mu).
func (s *settings) window() int64 {
	if s.windowTier > 0 {
		return s.windowTier
	}
	return s.model.Info().ContextWindow
}

// thinkingBudget is the thought level in tokens (guarded by s.mu).
func (s *settings) thinkingBudget() int {
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

func (s *settings) setMode(id string) error {
	if !slices.ContainsFunc(Modes, func(m ModeInfo) bool { return m.ID == id }) {
		return invalidValue("unknown mode %q (modes: ask, default, edit, plan, yolo, deny)", id)
	}
	return s.commit(func(v *savedSettings) error {
		v.mode = permission.Mode(id)
		return nil
	})
}

// setModel switches the model; it returns the new one (nil when unchanged).
func (s *settings) setModel(id string) (llm.Model, error) {
	current := s.view().model.Info()
	if id == current.ID {
		return nil, nil
	}
	if !slices.ContainsFunc(s.agent.modelChoices(current), func(m ModelChoice) bool { return m.ID == id }) || s.agent.cfg.OpenModel == nil {
		return nil, invalidValue("model %q is not available with the credentials at hand", id)
	}
	m, err := s.agent.cfg.OpenModel(id)
	if err != nil {
		details := fmt.Sprintf("model %q cannot be opened; see the log", id)
		if u, ok := usererr.Of(err); ok {
			details = fmt.Sprintf("model %q cannot be used: %s", id, u.Message)
		}
		return nil, &usererr.Error{Message: "Invalid config value", Details: details, Err: fmt.Errorf("%w: %w", ErrInvalidValue, err)}
	}
	if err := s.commit(func(v *savedSettings) error {
		v.model = m
		v.windowTier = 0 // tiers belong to a model
		return nil
	}); err != nil {
		return nil, err
	}
	s.agent.windows.Delete(s.id)
	return m, nil
}

func (s *settings) setThoughtLevel(id string) error {
	if !slices.ContainsFunc(thoughtLevels, func(l thoughtLevel) bool { return l.ID == id }) {
		return invalidValue("unknown thought level %q (levels: off, low, medium, high, max)", id)
	}
	return s.commit(func(v *savedSettings) error {
		if !v.model.Info().Reasoning {
			return invalidValue("the current model does not support reasoning")
		}
		v.thought = id
		return nil
	})
}

func (s *settings) setContextWindow(value string) error {
	n, err := strconv.ParseInt(value, 10, 64)
	s.mu.Lock()
	tiers := s.tiers()
	ok := err == nil && slices.Contains(tiers, n) && len(tiers) >= 2
	if ok {
		s.windowTier = n
		s.version++ // a settings write in flight keeps this tier
	}
	s.mu.Unlock()
	switch {
	case err != nil || !slices.Contains(tiers, n):
		return invalidValue("context window %q is not one of the model's tiers %v", value, tiers)
	case !ok:
		return invalidValue("the current model has a single context window")
	}
	s.agent.windows.Store(s.id, n)
	return nil
}

// storedControls is what the store keeps of a session's settings (the
// context window is deliberately not kept: it reverts in a new process).
type storedControls struct {
	ThoughtLevel string       `json:"thoughtLevel,omitempty"`
	Agent        *ProfileInfo `json:"agent,omitempty"`
	Multitask    bool         `json:"multitask,omitempty"`
	// Owner is the connection that last created, loaded or resumed the
	// session (connowner.go); a settings save keeps the stored one.
	Owner string `json:"owner,omitempty"`
	// The codeMode markers (codemode.go): set once codeMode was written,
	// an explicit off included. Releases before store schema 3 stored
	// them under CodeBuddy's key names (retype.SessionConfig renames them).
	CodeMode  string `json:"codeMode,omitempty"`
	MainAgent string `json:"mainAgent,omitempty"`
}

// restore applies stored settings on load; it returns the model when it
// changed.
func (s *settings) restore(meta store.Session) llm.Model {
	var sc storedControls
	decoded := len(meta.Config) > 0 && json.Unmarshal(meta.Config, &sc) == nil
	// Opening a model may consult credentials: not under s.mu.
	var changed llm.Model
	current := s.view().model.Info()
	if meta.Model != "" && meta.Model != current.ID && s.agent.cfg.OpenModel != nil &&
		slices.ContainsFunc(s.agent.modelChoices(current), func(m ModelChoice) bool { return m.ID == meta.Model }) {
		if m, err := s.agent.cfg.OpenModel(meta.Model); err == nil {
			changed = m
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++ // a write in flight runs again on top of the stored settings
	if meta.Mode != "" {
		s.mode = permission.Mode(meta.Mode)
	}
	// A session keeps the profile it was created with, whatever this
	// process was launched with.
	if decoded && sc.ThoughtLevel != "" {
		s.thought = sc.ThoughtLevel
	}
	if decoded && sc.Agent != nil {
		s.profile = sc.Agent
	}
	if decoded {
		s.multitask = sc.Multitask
	}
	if decoded && ValidCodeMode(sc.CodeMode) {
		s.codeMode = sc.CodeMode
	}
	if changed != nil {
		s.model = changed
	}
	if v, ok := s.agent.windows.Load(s.id); ok && slices.Contains(s.tiers(), v.(int64)) {
		s.windowTier = v.(int64)
	}
	return changed
}

// costOf prices a response with the catalog; ok is false when unknown.
func costOf(info llm.ModelInfo, u llm.Usage) (float64, bool) {
	p, m := llm.ParseModelID(info.ID)
	return catalog.Lookup(p, m).Cost(u)
}
