package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/commands"
	"github.com/corvid-agent/corvid/internal/mcp"
)

// startMCP starts the session's MCP servers (the editor's list merged with
// the configured one; the editor wins on names) without waiting for them:
// the session's first prompt does (toolbox.awaitMCP). A server that fails
// does not fail the session: its failure becomes a notice for the user.
func (s *Session) startMCP(editor, configured []mcp.Server) {
	servers := mcp.Merge(editor, configured)
	if len(servers) == 0 {
		return
	}
	// A tool may print a server's token; configured servers' are known
	// from the start, the editor's from now on.
	s.agent.redact.add(mcp.HeaderSecrets(editor)...)
	mgr, fails := mcp.Launch(servers, mcp.Options{
		Logger:        s.agent.cfg.Logger.With("session", s.ID),
		OnChange:      s.mcpChanged,
		OnNotice:      s.notice,
		Roots:         s.env.Roots,
		Sample:        s.mcpSample,
		Ask:           s.env.Ask,
		Dir:           s.env.Cwd,
		ClientName:    "corvid",
		ClientVersion: s.agent.cfg.Version,
	})
	for _, f := range fails {
		s.notices.add(f.Err.Error())
	}
	s.toolbox.setMCP(mgr)
}

// mcpChanged follows a server's tool or prompt list.
func (s *Session) mcpChanged() {
	s.toolbox.rebuild()
	s.ShowAll(Event{Kind: EventCommands, Commands: s.Commands()})
}

// resolveMCPLink reads a mentioned resource from the MCP server that
// offers it; a link no server claims stays a link.
func (s *Session) resolveMCPLink(ctx context.Context, b Block) string {
	text, server, ok, err := s.toolbox.view().mcp.ReadResource(ctx, b.URI)
	switch {
	case !ok:
		return fmt.Sprintf("<resource_link uri=%q name=%q/>", b.URI, b.Name)
	case err != nil:
		return fmt.Sprintf("<resource_link uri=%q name=%q server=%q error=%q/>", b.URI, b.Name, server, err.Error())
	}
	return fmt.Sprintf("<resource uri=%q server=%q>\n%s\n</resource>", b.URI, server, text)
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
