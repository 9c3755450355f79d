package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/commands"
	"github.com/corvid-agent/corvid/internal/mcp"
	"github.com/corvid-agent/corvid/internal/tool"
)

// startMCP starts the session's MCP servers (the editor's list merged with
// the configured one; the editor wins on names) without waiting for them:
// the session's first prompt does (awaitMCP). A server that fails does not
// fail the session: its failure becomes a notice for the user.
func (s *Session) startMCP(editor []mcp.Server) {
	servers := mcp.Merge(editor, s.mcpCfg)
	if len(servers) == 0 {
		return
	}
	mgr, fails := mcp.Launch(servers, mcp.Options{
		Logger:        s.agent.cfg.Logger.With("session", s.ID),
		OnChange:      s.mcpChanged,
		OnNotice:      s.mcpNotice,
		Roots:         s.env.Roots,
		Sample:        s.mcpSample,
		Dir:           s.env.Cwd,
		ClientName:    "corvid",
		ClientVersion: s.agent.cfg.Version,
	})
	s.mu.Lock()
	s.mcp = mgr
	s.prompts = mcpPrompts{mgr}
	for _, f := range fails {
		s.notices = append(s.notices, f.Err.Error())
	}
	s.mu.Unlock()
	s.rebuildTools()
}

// awaitMCP waits, on the session's first prompt only, at most 5 s for the
// MCP servers still starting (ctx, the turn's, cuts it short), so that a
// server that starts quickly serves that prompt; the ones still starting
// after that join later, with a notice.
func (s *Session) awaitMCP(ctx context.Context) {
	s.mu.Lock()
	mgr := s.mcp
	s.mu.Unlock()
	if mgr == nil {
		return
	}
	mgr.AwaitStart(ctx)
	// The servers that are up are in the tools now, even if their own
	// change callback has not run yet.
	s.rebuildTools()
}

// mcpNotice tells the user about an MCP server's life (a crash, a
// restart, a late start): with the start notices until the editor took
// them, in the conversation after.
func (s *Session) mcpNotice(text string) {
	s.mu.Lock()
	if !s.noticesTaken {
		s.notices = append(s.notices, text)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.Notify("[corvid] " + text)
}

// mcpInstructions is what the session's MCP servers ask the model to know.
func (s *Session) mcpInstructions() string {
	s.mu.Lock()
	mgr := s.mcp
	s.mu.Unlock()
	return mgr.Instructions()
}

// resolveMCPLink reads a mentioned resource from the MCP server that
// offers it; a link no server claims stays a link.
func (s *Session) resolveMCPLink(ctx context.Context, b Block) string {
	s.mu.Lock()
	mgr := s.mcp
	s.mu.Unlock()
	text, server, ok, err := mgr.ReadResource(ctx, b.URI)
	switch {
	case !ok:
		return fmt.Sprintf("<resource_link uri=%q name=%q/>", b.URI, b.Name)
	case err != nil:
		return fmt.Sprintf("<resource_link uri=%q name=%q server=%q error=%q/>", b.URI, b.Name, server, err.Error())
	}
	return fmt.Sprintf("<resource uri=%q server=%q>\n%s\n</resource>", b.URI, server, text)
}

// mcpChanged follows a server's tool or prompt list.
func (s *Session) mcpChanged() {
	s.rebuildTools()
	if s.front != nil {
		s.front.Emit(Event{Kind: EventCommands, Commands: s.Commands()})
	}
}

// rebuildTools makes the registry the built-ins, the skill loader and the
// live MCP tools.
func (s *Session) rebuildTools() {
	reg := tool.NewRegistry(s.agent.cfg.Tools()...)
	reg.Add(commands.SkillTool(func() []commands.Skill {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.skills
	}))
	if fo := s.agent.cfg.FinalOutput; fo != nil {
		reg.Add(submitOutput{s: s, fo: *fo})
	}
	s.mu.Lock()
	mgr := s.mcp
	s.mu.Unlock()
	if mgr != nil {
		for _, t := range mgr.Tools() {
			reg.Add(t)
		}
	}
	s.mu.Lock()
	s.tools = reg
	s.mu.Unlock()
}

// registry is the current tool set.
func (s *Session) registry() *tool.Registry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// TakeNotices returns (once) what the user should be told about the
// session's start, such as MCP servers that failed.
func (s *Session) TakeNotices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notices
	s.notices, s.noticesTaken = nil, true
	return n
}

// Notify tells the user something in the conversation (recorded).
func (s *Session) Notify(text string) {
	s.emit(Event{Kind: EventMessageChunk, MessageID: NewID("msg"), Content: &Block{Type: BlockText, Text: text}})
}

// mcpPrompts offers MCP prompts as "/server:prompt" commands.
type mcpPrompts struct{ m *mcp.Manager }

func (p mcpPrompts) Commands() []CommandInfo {
	var out []CommandInfo
	for _, pr := range p.m.Prompts() {
		var hint []string
		for _, a := range pr.Arguments {
			hint = append(hint, a.Name)
		}
		out = append(out, CommandInfo{Name: mcp.CommandName(pr.Server, pr.Name), Description: orDefault(pr.Description, "MCP prompt "+pr.Name+" from "+pr.Server), Hint: strings.Join(hint, " ")})
	}
	return out
}

func (p mcpPrompts) Expand(ctx context.Context, name, args string) (string, bool, error) {
	if !strings.Contains(name, ":") {
		return "", false, nil
	}
	for _, pr := range p.m.Prompts() {
		if mcp.CommandName(pr.Server, pr.Name) != name {
			continue
		}
		server, prompt := pr.Server, pr.Name
		vals := commands.SplitArgs(args)
		m := map[string]string{}
		for i, a := range pr.Arguments {
			if i < len(vals) {
				m[a.Name] = vals[i]
			} else if a.Required {
				return "", true, fmt.Errorf("argument %q is required", a.Name)
			}
		}
		// Extra words go to the last argument.
		if n := len(pr.Arguments); n > 0 && len(vals) > n {
			m[pr.Arguments[n-1].Name] = strings.Join(vals[n-1:], " ")
		}
		text, err := p.m.GetPrompt(ctx, server, prompt, m)
		return text, true, err
	}
	return "", false, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
