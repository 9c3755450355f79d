package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/commands"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/prompt"
)

// CommandInfo is a slash command as the editor's "/" menu shows it.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Hint        string `json:"hint,omitempty"`
}

// PromptSource supplies extra commands that expand to prompt text, such as
// MCP prompts ("server:prompt").
type PromptSource interface {
	Commands() []CommandInfo
	Expand(ctx context.Context, name, args string) (text string, ok bool, err error)
}

// discover reads the session's commands and skills and rebuilds its system
// prompt (skills are listed in it). Call with s.mu not held.
func (s *Session) discover() {
	cfg := &s.agent.cfg
	var cmds []commands.Command
	var skills []commands.Skill
	if cfg.Env != nil {
		var warnings []string
		cmds, skills, warnings = commands.Discover(s.env.Cwd, cfg.Env)
		for _, w := range warnings {
			cfg.Logger.Warn("commands", "session", s.ID, "warning", w)
		}
	}
	system := cfg.System
	if cfg.Env != nil {
		system = prompt.Build(prompt.Options{Base: cfg.System, Cwd: s.env.Cwd, Env: cfg.Env,
			NoProjectInstructions: cfg.NoProjectInstructions, Skills: skills})
	}
	if s.extra != "" {
		system += "\n\n" + s.extra
	}
	s.mu.Lock()
	s.custom, s.skills, s.system = cmds, skills, system
	s.mu.Unlock()
}

// Commands lists the session's slash commands: built-ins, custom commands,
// skills and the prompt source's.
func (s *Session) Commands() []CommandInfo {
	s.mu.Lock()
	custom, src := s.custom, s.prompts
	s.mu.Unlock()
	var out []CommandInfo
	for _, c := range commands.Builtins() {
		out = append(out, CommandInfo{Name: c.Name, Description: c.Description, Hint: c.ArgumentHint})
	}
	for _, c := range custom {
		out = append(out, CommandInfo{Name: c.Name, Description: c.Description, Hint: c.ArgumentHint})
	}
	if src != nil {
		out = append(out, src.Commands()...)
	}
	return out
}

// SetPromptSource adds a source of prompt commands (MCP prompts) and tells
// the front end the command set changed.
func (s *Session) SetPromptSource(p PromptSource) {
	s.mu.Lock()
	s.prompts = p
	s.mu.Unlock()
}

// CommandsChanged re-reads the command and skill files and pushes the set.
func (s *Session) CommandsChanged() {
	s.discover()
	s.front.Emit(Event{Kind: EventCommands, Commands: s.Commands()})
}

// watchCommands re-pushes the command set when its files change.
func (s *Session) watchCommands() {
	if s.agent.cfg.Env == nil || s.agent.cfg.CommandPoll <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopWatch = cancel
	// The watcher stops when ctx ends (Session.Close).
	commands.Watch(ctx, s.env.Cwd, s.agent.cfg.Env, s.agent.cfg.CommandPoll, s.CommandsChanged)
}

// expandCommand turns a slash command prompt into what the turn does. It
// returns handled=true when the command was executed without the model.
func (t *Turn) expandCommand(blocks []Block) (out []Block, handled bool, stop StopReason, err error) {
	if len(blocks) == 0 || blocks[0].Type != BlockText {
		return blocks, false, "", nil
	}
	name, args, ok := commands.Parse(blocks[0].Text)
	if !ok {
		return blocks, false, "", nil
	}
	s := t.s
	replace := func(text string) []Block {
		out := append([]Block{{Type: BlockText, Text: text}}, blocks[1:]...)
		return out
	}
	if b, ok := commands.LookupBuiltin(name); ok {
		prompt, err := b.Run(commandHost{t}, args)
		switch {
		case err != nil && t.ctx.Err() != nil:
			return nil, true, StopCancelled, nil
		case err != nil:
			return nil, true, "", err
		case prompt == "":
			return nil, true, StopEndTurn, nil
		}
		return replace(prompt), false, "", nil
	}
	s.mu.Lock()
	custom, src := s.custom, s.prompts
	s.mu.Unlock()
	for _, c := range custom {
		if c.Name == name {
			return replace(commands.Expand(c, args)), false, "", nil
		}
	}
	if src != nil {
		text, ok, err := src.Expand(t.ctx, name, args)
		if err != nil {
			t.say(fmt.Sprintf("/%s failed: %v", name, err))
			return nil, true, StopEndTurn, nil
		}
		if ok {
			return replace(text), false, "", nil
		}
	}
	return blocks, false, "", nil // not a command: send the text as written
}

// say emits (and records) a short agent message.
func (t *Turn) say(text string) {
	t.s.emit(Event{Kind: EventMessageChunk, MessageID: NewID("msg"), Content: &Block{Type: BlockText, Text: text}})
}

// commandHost is the turn a built-in command runs in.
type commandHost struct{ t *Turn }

func (h commandHost) Say(text string) { h.t.say(text) }
func (h commandHost) ClearContext() {
	h.t.s.resetHistory(func([]llm.Message) []llm.Message { return nil })
}
func (h commandHost) Compact(focus string) error { return h.t.compact(focus, true) }
func (h commandHost) Cwd() string                { return h.t.s.env.Cwd }

func (h commandHost) Menu() ([]commands.Command, []commands.Skill) {
	s := h.t.s
	var cmds []commands.Command
	for _, c := range s.Commands() {
		cmds = append(cmds, commands.Command{Name: c.Name, Description: c.Description, ArgumentHint: c.Hint})
	}
	s.mu.Lock()
	skills := s.skills
	s.mu.Unlock()
	return cmds, skills
}

// Compaction.

// compactAt is the share of the context window that triggers compaction.
const compactAt = 0.85

// keepTurns is how many recent user turns compaction keeps verbatim.
const keepTurns = 2

// compact summarises the older part of the context with the model and keeps
// the recent turns verbatim. manual is true for /compact.
func (t *Turn) compact(focus string, manual bool) error {
	s := t.s
	s.mu.Lock()
	history := append([]llm.Message(nil), s.history...)
	model := s.model
	s.mu.Unlock()
	cut := compactionCut(history)
	if cut <= 0 {
		if manual {
			t.say("Nothing to compact yet: the conversation is short.")
		}
		return nil
	}
	// Copies: appending the instruction to older must not overwrite recent.
	older := append([]llm.Message(nil), history[:cut]...)
	recent := append([]llm.Message(nil), history[cut:]...)
	instruction := "Summarise the conversation above so that it can continue from the summary alone: the user's goals, decisions made, files read or changed (with paths), commands run and their outcomes, the current state, and open tasks. Be concise and factual."
	if strings.TrimSpace(focus) != "" {
		instruction += " Focus on: " + focus
	}
	req := llm.Request{
		Model:     modelName(model.Info()),
		System:    "You write precise summaries of coding sessions.",
		Messages:  append(older, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text(instruction)}}),
		MaxTokens: s.agent.cfg.MaxTokens,
	}
	var summary strings.Builder
	var usage llm.Usage
	for ev, err := range model.Stream(t.ctx, req) {
		if err != nil {
			return err
		}
		switch ev.Type {
		case llm.EventTextDelta:
			summary.WriteString(ev.Text)
		case llm.EventUsage:
			usage = ev.Usage
		}
	}
	text := strings.TrimSpace(summary.String())
	if text == "" {
		return fmt.Errorf("compaction produced an empty summary")
	}
	fresh := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("Summary of our conversation so far (older messages were compacted):\n\n" + text)}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("Understood; I will continue from this summary.")}},
	}
	fresh = append(fresh, recent...)
	s.resetHistory(func([]llm.Message) []llm.Message { return fresh })
	how := "Compacted the conversation"
	if !manual {
		how = "The context was nearly full, so I compacted the conversation"
	}
	t.say(fmt.Sprintf("%s: %d earlier messages are now a summary; the last %d turns are kept as they were.", how, len(older), keepTurns))
	s.mu.Lock()
	window := s.window()
	s.mu.Unlock()
	used := estimateTokens(fresh) + int64(len(text)/4)
	if usage.OutputTokens > 0 {
		used = estimateTokens(recent) + usage.OutputTokens
	}
	s.mu.Lock()
	s.lastUsed = used
	s.mu.Unlock()
	s.emit(Event{Kind: EventUsage, Usage: &Usage{Used: used, Size: window}})
	return nil
}

// compactionCut is the index of the first message kept verbatim: the start
// of the keepTurns-th last user prompt (tool results do not count).
func compactionCut(h []llm.Message) int {
	n := 0
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == llm.RoleUser && !isToolResults(h[i]) {
			n++
			if n == keepTurns {
				return i
			}
		}
	}
	return 0
}

func isToolResults(m llm.Message) bool {
	for _, p := range m.Parts {
		if p.Type != llm.PartToolResult {
			return false
		}
	}
	return len(m.Parts) > 0
}

func estimateTokens(msgs []llm.Message) int64 {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.Input) + len(p.Data)/3
		}
	}
	return int64(n / 4)
}

// needsCompaction reports whether the context is over the threshold.
func (s *Session) needsCompaction() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.window()
	return w > 0 && s.lastUsed >= int64(float64(w)*compactAt)
}

func (s *Session) systemPrompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.system == "" {
		return s.agent.cfg.System
	}
	return s.system
}

// modelName is the provider's own id of the model (ModelInfo.ID is
// provider:model; requests carry the model part).
func modelName(info llm.ModelInfo) string {
	_, m := llm.ParseModelID(info.ID)
	return m
}
