package agent

import (
	"fmt"
	"io"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/tool"
)

// Session is one conversation in a working directory. It is made of parts
// with one job each:
//
//   - conv (conversation.go): the model context, the context meter and the
//     event log: every event is recorded there, then shown.
//   - settings (settings.go): model, permission mode, thought level,
//     context tier and agent profile, as the editor's pickers show them.
//   - toolbox (toolbox.go): the tool registry (built-ins, skills, MCP
//     tools), the custom commands and skills, the system prompt, the MCP
//     servers and the command watcher.
//   - runner (turnrunner.go): the running turn and cancellation; the turn
//     itself (turn.go, loop.go, toolcalls.go) passes each tool call
//     through the permission gate (gate.go).
//   - notices (notices.go): what the user is told about the session's start.
//
// Locking: each part guards its own fields with its own mutex and holds it
// only to read or write them, never while calling anything else (another
// part, the front end, the store, a model, a tool). No two locks are ever
// held at once, so there is no order to respect.
type Session struct {
	ID    string
	agent *Agent
	front FrontEnd
	env   tool.Env

	conv     *conversation
	settings *settings
	toolbox  *toolbox
	runner   turnRunner
	notices  notices
	gate     gate
	sub      subState // its place in a sub-agent tree (subagent.go)
	workers  *workers // detached workers and their inbox (worker.go); nil in a sub-agent
}

// Cwd is the session's working directory.
func (s *Session) Cwd() string { return s.env.Cwd }

// windDown bounds how long a new prompt (or Close) waits for a cancelled
// turn to end.
const windDown = 5 * time.Second

// StartTurn registers a turn for blocks. It is quick and must be called in
// the order prompts arrived, so that a cancel right behind it finds it. Run
// does the work.
func (s *Session) StartTurn(blocks []Block) (*Turn, error) {
	return s.runner.start(s, blocks, TurnOptions{})
}

// TurnOptions are what a front end attaches to one turn.
type TurnOptions struct {
	// TurnID is the client's id of the turn (e.g. CodeBuddy's client turn
	// id): stored with the turn's prompt (the user chunks' Tags.TurnID, so
	// a replay shows it) and reported by TurnTag while the turn runs.
	TurnID string
	// Headers go with each of the turn's model requests (llm.WithHeaders).
	Headers map[string]string
	// From is the front end that sent the prompt: it shows the prompt
	// itself, and every other front end of the session (Attach) is shown
	// it, as user chunks before the turn's first shown event.
	From FrontEnd
}

// StartTurnWith is StartTurn with options.
func (s *Session) StartTurnWith(blocks []Block, o TurnOptions) (*Turn, error) {
	return s.runner.start(s, blocks, o)
}

// TurnTag names the turn whose events are being emitted now (zero
// between turns): it is set once an earlier cancelled turn has ended, and
// cleared before the turn reports it ended. Read it only from the front
// end's Emit, which the turn calls.
func (s *Session) TurnTag() TurnTag { return s.runner.tag() }

// Cancel stops the running turn, if any. Cancelling an idle session does
// nothing.
func (s *Session) Cancel() { s.runner.cancel() }

// Close cancels any turn (no drain turn starts after it), waits (bounded)
// for it to end, stops the detached workers (recorded as interrupted), and frees the
// session's runtime resources (its terminals and their processes, its
// command watcher and MCP servers).
func (s *Session) Close() {
	if t := s.runner.shut(); t != nil {
		select {
		case <-t.done:
		case <-time.After(windDown):
		}
	}
	s.stopWorkers()
	if c, ok := s.env.Terminals.(io.Closer); ok {
		_ = c.Close()
	}
	s.toolbox.close()
	s.conv.unfollow()
	s.conv.flush()
	s.conv.log.close()
}

// Controls returns the session's current settings.
func (s *Session) Controls() Controls { return s.settings.controls() }

// ModelAndMode are the session's model (provider:model) and permission
// mode; unlike Controls it looks up no credentials (serve lists it often).
func (s *Session) ModelAndMode() (model, mode string) {
	v := s.settings.view()
	mode = string(v.mode)
	if mode == "" {
		mode = string(permission.ModeDefault)
	}
	return v.model.Info().ID, mode
}

// Stats is the session's usage so far: turns, tokens, cost.
func (s *Session) Stats() Stats { return s.conv.stats() }

// SetMode changes the permission mode.
func (s *Session) SetMode(id string) error { return s.settings.setMode(id) }

// SetModel switches the session's model.
func (s *Session) SetModel(id string) error {
	m, err := s.settings.setModel(id)
	if m != nil {
		s.env.Images = m.Info().Images
	}
	return err
}

// ReopenModel opens the session's model again, the same model with the
// credentials at hand now: after authenticate, a key stored since the
// session opened (the old one revoked) serves it too, not only the
// sessions opened after. The model's settings (context tier, thought
// level) stay. When it cannot be opened, the session keeps the model it
// has and the error says why.
func (s *Session) ReopenModel() error {
	open := s.agent.cfg.OpenModel
	if open == nil {
		return nil
	}
	id := s.settings.view().model.Info().ID
	if p, _ := llm.ParseModelID(id); p == config.ScriptProvider {
		return nil // no credentials, and opening it again would restart its script
	}
	m, err := open(id)
	if err != nil {
		return fmt.Errorf("reopen model %s: %w", id, err)
	}
	return s.settings.commit(func(v *savedSettings) error {
		if v.model.Info().ID != id {
			return nil // switched meanwhile: that choice stands
		}
		v.model = m
		return nil
	})
}

// SetThoughtLevel sets how much the model thinks.
func (s *Session) SetThoughtLevel(id string) error { return s.settings.setThoughtLevel(id) }

// SetContextWindow selects one of the model's context tiers, by its token
// count as a decimal string.
func (s *Session) SetContextWindow(value string) error {
	return s.settings.setContextWindow(value)
}

// Commands lists the session's slash commands: built-ins, custom commands,
// skills and the prompt source's.
func (s *Session) Commands() []CommandInfo { return s.toolbox.commands() }

// SetPromptSource adds a source of prompt commands (MCP prompts).
func (s *Session) SetPromptSource(p PromptSource) { s.toolbox.setPromptSource(p) }

// CommandsChanged re-reads the command and skill files and pushes the set.
func (s *Session) CommandsChanged() {
	s.toolbox.discover()
	s.ShowAll(Event{Kind: EventCommands, Commands: s.Commands()})
}

// TakeNotices returns (once) what the user should be told about the
// session's start, such as MCP servers that failed.
func (s *Session) TakeNotices() []string { return s.notices.take() }

// Notify tells the user something in the conversation (recorded).
func (s *Session) Notify(text string) {
	s.conv.emit(Event{Kind: EventMessageChunk, MessageID: NewID("msg"), Content: &Block{Type: BlockText, Text: text}})
}

// notice tells the user about the session's life (an MCP server's crash,
// restart or late start): with the start notices until the editor took
// them, after that as a live notice or in the conversation (tell).
func (s *Session) notice(text string) {
	if !s.notices.add(text) {
		s.tell(Notice{Severity: SeverityWarning, Title: text})
	}
}
