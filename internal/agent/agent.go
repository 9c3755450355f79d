// Package agent runs sessions and their turns: the loop that streams a model
// response, runs the tools it asks for (through the permission gate), feeds
// the results back and repeats until a stop reason. It knows nothing of ACP:
// a front end (internal/acpserver, internal/print) receives Events through
// the FrontEnd interface and answers permission questions.
//
// Start with Agent.NewSession and Session.StartTurn / Turn.Run. A Session
// is made of parts with one job each (conversation, settings, toolbox, turn
// runner; see Session for the list and the locking rule). The stored
// event-log format has one writer and one reader, both in eventlog.go
// (Fold, which `corvid sessions` uses too).
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corvid-agent/corvid/internal/codemode"
	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/mcp"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/tool"
)

// Config is what every session of an Agent shares.
type Config struct {
	Model           llm.Model // nil when no provider is configured
	Tools           func() []tool.Tool
	System          string // the system prompt
	MaxTurnRequests int    // model calls per turn; default 100
	MaxTokens       int    // per response; default the model's max output
	Permissions     Permissions
	Logger          *slog.Logger
	// StorePath is the session database; "" keeps sessions in memory only.
	StorePath string
	// Models lists the models a session may switch to; OpenModel opens one
	// by provider:model id. Without them the model option has one value.
	Models    func() []ModelChoice // computed on first use (may consult credentials)
	OpenModel func(id string) (llm.Model, error)
	// ThoughtLevel is the default thought level of new sessions.
	ThoughtLevel string
	// Env is where project instructions, commands and skills are looked
	// up (config dirs); nil skips them and uses System as is.
	Env config.Env
	// NoProjectInstructions leaves AGENTS.md files out of the prompt.
	NoProjectInstructions bool
	// CommandPoll is how often command and skill folders are checked for
	// changes (0: never).
	CommandPoll time.Duration
	// MCPServers are configured MCP servers every session starts (the
	// editor's list wins on name clashes).
	MCPServers []mcp.Server
	// Version is corvid's version, told to MCP servers.
	Version string
	// SessionContext, if set, is called once when a session starts (new or
	// loaded): text is added to the session's system prompt (an agent
	// profile's instructions and seed regions), and notices are told to the
	// user after the start, with the session configuration's own.
	SessionContext func(SessionStart) (text string, notices []string)
	// FinalOutput, if set, offers the submit_output tool; a submission is
	// sent as one more message when the turn ends.
	FinalOutput *FinalOutput
	// Profile names the launch agent profile (--agent) and its sub-agent
	// depth; it is stored with each new session and shown for it.
	Profile *ProfileInfo
	// MaxDepth, when set, is the sub-agent tree depth of every session
	// (--max-depth), over the profile's; 0 offers no sub-agents. nil: the
	// profile's depth, else DefaultMaxDepth.
	MaxDepth *int
	// AgentProfile resolves an agent profile a sub-agent is started with
	// (the task tool's profile); nil: none can be named.
	AgentProfile func(name string) (SubProfile, error)
	// NoBackgroundTasks withholds the multitask overlay (multitask.go).
	NoBackgroundTasks bool
	// CodeModeLimits bound the scripts of codeMode "all" sessions (zero
	// fields: codemode.Defaults).
	CodeModeLimits codemode.Limits
	// ForCwd returns the configuration of a session rooted at a directory
	// (its project's .corvid/config.toml over the user's, plus the launch
	// flags). nil: every session uses Permissions and MCPServers.
	ForCwd func(cwd string) (SessionConfig, error)
	// Secrets are values (provider keys) replaced in tool output before it
	// reaches a frame, the store or the model.
	Secrets []string
	// MoreSecrets, if set, returns values learnt after start that are
	// secrets too (keys read from the OS keyring). Its list only grows.
	MoreSecrets func() []string
}

// Agent creates sessions.
type Agent struct {
	cfg    Config
	owner  string // this process's identity for store leases
	redact *redactor

	modelMu sync.RWMutex

	// syncedFailures is the store's failed-commit count at the last Sync.
	syncedFailures atomic.Uint64

	stMu     sync.Mutex
	st       *store.Store
	stClosed bool

	// windows remembers each session's chosen context tier (session id →
	// int64) for this process, so session/load and session/resume keep
	// it; a new process starts at the model's default window.
	windows sync.Map

	// listStates caches each stored session's ListState (session id →
	// listStateEntry) for session/list (liststate.go).
	listStates sync.Map
}

// New returns an agent.
func New(cfg Config) *Agent {
	if cfg.MaxTurnRequests <= 0 {
		cfg.MaxTurnRequests = 100
	}
	if cfg.Tools == nil {
		cfg.Tools = tool.Builtins
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Agent{cfg: cfg, owner: processOwner(), redact: newRedactor(cfg.Secrets, cfg.MoreSecrets)}
}

// Model returns the configured model (nil if none).
func (a *Agent) Model() llm.Model {
	a.modelMu.RLock()
	defer a.modelMu.RUnlock()
	return a.cfg.Model
}

// SetModel replaces the model new sessions use (after authentication or
// logout); open sessions keep theirs until Session.ReopenModel (which
// authenticate calls for its connection's sessions).
func (a *Agent) SetModel(m llm.Model) {
	a.modelMu.Lock()
	a.cfg.Model = m
	a.modelMu.Unlock()
}

// ErrNoModel is returned when no provider is configured.
var ErrNoModel = errors.New("no model configured")

// SessionOptions describe a new session.
type SessionOptions struct {
	ID    string // "" = generate
	Cwd   string
	Roots []string // additional directories
	Front FrontEnd
	FS    tool.FS // nil = local disk
	// MCP are the editor's MCP servers for this session.
	MCP []mcp.Server
	// profile is a loaded session's stored agent profile (nil: the
	// launch's), which decides its sub-agent depth.
	profile *ProfileInfo
	// CodeMode is a new session's initial codeMode ("" or off: off).
	CodeMode string
	// Terminals runs shell commands; nil = a private in-process set. The
	// session closes it (if it is an io.Closer) when the session closes.
	Terminals tool.Terminals
	// Replay, for LoadSession, gets the stored history's display events as
	// the log is read (FoldStream), then the team's status if any: each
	// message once (text in wire form, Block.TextJSON), each tool call
	// followed by its final state, the last usage reading. An event is
	// only valid until Replay returns. nil: no replay.
	Replay func(Event)
	// ReplayTextMax: a replayed message's text longer than this many
	// bytes is given in pieces of at most this many (see FoldStream); 0:
	// whole.
	ReplayTextMax int
}

// NewSession creates a session and records it in the store.
func (a *Agent) NewSession(o SessionOptions) (*Session, error) {
	model := a.Model()
	if model == nil {
		return nil, ErrNoModel
	}
	if o.ID == "" {
		o.ID = NewID("sess")
	}
	sc, err := a.sessionConfig(o.Cwd)
	if err != nil {
		return nil, err
	}
	st, err := a.openStore()
	if err != nil {
		return nil, err
	}
	if st != nil {
		stc := storedControls{Agent: a.cfg.Profile}
		if o.CodeMode == CodeModeAll {
			stc.CodeMode, stc.MainAgent = codeModeMarkers(CodeModeAll)
		}
		cfg, _ := json.Marshal(stc)
		err := st.CreateSession(context.Background(), store.Session{ID: o.ID, Cwd: o.Cwd, AdditionalDirs: o.Roots,
			Model: model.Info().ID, Mode: string(sc.Permissions.Mode), Config: cfg})
		if err != nil {
			return nil, storeFailure("record the new session", err)
		}
	}
	s, err := a.newSession(o, st, sc)
	if err == nil {
		s.follow(nil)
	}
	return s, err
}

// newSession builds the runtime state of a session.
func (a *Agent) newSession(o SessionOptions, st *store.Store, sc SessionConfig) (*Session, error) {
	model := a.Model()
	if model == nil {
		return nil, ErrNoModel
	}
	fs := o.FS
	if fs == nil {
		fs = tool.LocalFS{}
	}
	terms := o.Terminals
	if terms == nil {
		terms = tool.NewLocalTerminals()
	}
	var sandbox *tool.Sandbox
	if sc.Sandbox.On() {
		sb := sc.Sandbox
		sandbox = &sb
	}
	s := &Session{
		ID:    o.ID,
		agent: a,
		front: o.Front,
		env: tool.Env{
			Cwd:       o.Cwd,
			Roots:     append([]string{o.Cwd}, o.Roots...),
			FS:        fs,
			Terminals: terms,
			Images:    model.Info().Images,
			Sandbox:   sandbox,
		},
		conv:     newConversation(o.ID, st, a.cfg.Logger, o.Front),
		settings: &settings{agent: a, id: o.ID, store: st, model: model, mode: sc.Permissions.Mode, thought: a.cfg.ThoughtLevel, profile: a.cfg.Profile},
		gate:     gate{perms: sc.Permissions, memory: permission.NewMemory()},
	}
	if ask, ok := o.Front.(tool.Asker); ok {
		s.env.Ask = ask // the front end can put questions to the user
	}
	if o.CodeMode == CodeModeAll {
		s.settings.codeMode = CodeModeAll
	}
	s.toolbox = &toolbox{cfg: &a.cfg, id: o.ID, cwd: o.Cwd}
	s.toolbox.own = append(s.toolbox.own, exitPlan{s: s})
	if fo := a.cfg.FinalOutput; fo != nil {
		s.toolbox.own = append(s.toolbox.own, submitOutput{s: s, fo: *fo})
	}
	s.notices.add(sc.Notices...)
	if a.cfg.SessionContext != nil {
		var notices []string
		s.toolbox.extra, notices = a.cfg.SessionContext(s.sessionStart())
		s.notices.add(notices...)
	}
	s.toolbox.discover()
	prof := o.profile
	if prof == nil {
		prof = a.cfg.Profile
	}
	s.initTree(prof)
	s.toolbox.rebuild()
	s.startMCP(o.MCP, sc.MCPServers)
	s.toolbox.watch(s.CommandsChanged)
	return s, nil
}

// NewID returns a random id with a prefix.
func NewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
