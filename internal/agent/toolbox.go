package agent

import (
	"context"
	"sync"

	"github.com/corvid-agent/corvid/internal/commands"
	"github.com/corvid-agent/corvid/internal/mcp"
	"github.com/corvid-agent/corvid/internal/prompt"
	"github.com/corvid-agent/corvid/internal/tool"
)

// toolbox is what a session can do and offer: the tool registry (the
// built-ins, the skill loader, the session's own tools and the live MCP
// tools), the custom slash commands and skills found from its cwd, the
// system prompt that lists the skills, the MCP servers and the watcher
// that re-reads the command folders.
type toolbox struct {
	cfg   *Config
	id    string
	cwd   string
	own   []tool.Tool // tools of this session alone (submit_output)
	extra string      // Config.SessionContext's text, added to the system prompt (guarded by mu after start)
	base  string      // a switched profile's base system prompt ("": cfg.System; guarded by mu)

	mu        sync.Mutex
	tools     *tool.Registry
	system    string        // the system prompt (base + project instructions + env)
	building  chan struct{} // closed once the system prompt discover builds is set (nil: none in flight)
	custom    []commands.Command
	skills    []commands.Skill
	prompts   PromptSource
	mcp       *mcp.Manager
	stopWatch func()
}

// discover reads the session's commands and skills and rebuilds its system
// prompt (skills are listed in it). The prompt's project summary runs `git
// status`, which takes milliseconds: it is built in the background, so a
// session is answered (and a loaded one replayed) meanwhile, and view
// waits for it.
func (b *toolbox) discover() {
	cfg := b.cfg
	var cmds []commands.Command
	var skills []commands.Skill
	if cfg.Env != nil {
		var warnings []string
		cmds, skills, warnings = commands.Discover(b.cwd, cfg.Env)
		for _, w := range warnings {
			cfg.Logger.Warn("commands", "session", b.id, "warning", w)
		}
	}
	done := make(chan struct{})
	b.mu.Lock()
	base, extra := b.base, b.extra
	b.custom, b.skills = cmds, skills
	b.building = done
	b.mu.Unlock()
	if base == "" {
		base = cfg.System
	}
	build := func() {
		system := base
		if cfg.Env != nil {
			system = prompt.Build(prompt.Options{Base: base, Cwd: b.cwd, Env: cfg.Env,
				NoProjectInstructions: cfg.NoProjectInstructions, Skills: skills})
		}
		if extra != "" {
			system += "\n\n" + extra
		}
		b.mu.Lock()
		if b.building == done { // not overtaken by a later discover
			b.system, b.building = system, nil
		}
		b.mu.Unlock()
		close(done)
	}
	if cfg.Env == nil {
		build()
		return
	}
	go build()
}

// awaitSystem waits until no system prompt is being built.
func (b *toolbox) awaitSystem() {
	for {
		b.mu.Lock()
		done := b.building
		b.mu.Unlock()
		if done == nil {
			return
		}
		<-done
	}
}

// rebuild makes the registry the built-ins, the skill loader, the
// session's own tools and the live MCP tools.
func (b *toolbox) rebuild() {
	reg := tool.NewRegistry(b.cfg.Tools()...)
	reg.Add(commands.SkillTool(func() []commands.Skill { return b.peek().skills }))
	for _, t := range b.own {
		reg.Add(t)
	}
	if mgr := b.peek().mcp; mgr != nil {
		for _, t := range mgr.Tools() {
			reg.Add(t)
		}
	}
	b.mu.Lock()
	b.tools = reg
	b.mu.Unlock()
}

// toolboxView is a consistent copy of the toolbox's current state.
type toolboxView struct {
	tools   *tool.Registry
	system  string // the system prompt
	custom  []commands.Command
	skills  []commands.Skill
	prompts PromptSource
	mcp     *mcp.Manager // nil: no MCP servers
}

func (b *toolbox) view() toolboxView {
	b.awaitSystem()
	return b.peek()
}

// peek is view without waiting for the system prompt (which it may
// lack): for what reads the tools, commands, skills or MCP servers only.
func (b *toolbox) peek() toolboxView {
	b.mu.Lock()
	defer b.mu.Unlock()
	system := b.system
	if system == "" {
		system = b.cfg.System
	}
	return toolboxView{tools: b.tools, system: system, custom: b.custom, skills: b.skills, prompts: b.prompts, mcp: b.mcp}
}

// commands lists the slash commands: built-ins, custom commands, skills
// and the prompt source's.
func (b *toolbox) commands() []CommandInfo {
	v := b.peek()
	var out []CommandInfo
	for _, c := range commands.Builtins() {
		out = append(out, CommandInfo{Name: c.Name, Description: c.Description, Hint: c.ArgumentHint})
	}
	for _, c := range v.custom {
		out = append(out, CommandInfo{Name: c.Name, Description: c.Description, Hint: c.ArgumentHint})
	}
	if v.prompts != nil {
		out = append(out, v.prompts.Commands()...)
	}
	return out
}

func (b *toolbox) setPromptSource(p PromptSource) {
	b.mu.Lock()
	b.prompts = p
	b.mu.Unlock()
}

// watch calls changed when the command or skill folders change, until
// close.
func (b *toolbox) watch(changed func()) {
	if b.cfg.Env == nil || b.cfg.CommandPoll <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.mu.Lock()
	b.stopWatch = cancel
	b.mu.Unlock()
	commands.Watch(ctx, b.cwd, b.cfg.Env, b.cfg.CommandPoll, changed)
}

// setMCP makes mgr's servers the session's: their tools and prompts.
func (b *toolbox) setMCP(mgr *mcp.Manager) {
	b.mu.Lock()
	b.mcp = mgr
	b.prompts = mcpPrompts{mgr}
	b.mu.Unlock()
	b.rebuild()
}

// awaitMCP waits, on the session's first prompt only, at most 5 s for the
// MCP servers still starting (ctx, the turn's, cuts it short), so that a
// server that starts quickly serves that prompt; the ones still starting
// after that join later, with a notice.
func (b *toolbox) awaitMCP(ctx context.Context) {
	mgr := b.peek().mcp
	if mgr == nil {
		return
	}
	mgr.AwaitStart(ctx)
	// The servers that are up are in the tools now, even if their own
	// change callback has not run yet.
	b.rebuild()
}

// close stops the command watcher and the MCP servers.
func (b *toolbox) close() {
	b.mu.Lock()
	stop, mgr := b.stopWatch, b.mcp
	b.mu.Unlock()
	if stop != nil {
		stop()
	}
	if mgr != nil {
		_ = mgr.Close()
	}
}
