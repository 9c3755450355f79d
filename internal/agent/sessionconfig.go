package agent

import (
	"github.com/corvid-agent/corvid/internal/mcp"
	"github.com/corvid-agent/corvid/internal/tool"
)

// SessionConfig is what a session's project decides: the configuration
// found from the session's cwd (not the directory corvid was launched in),
// so that a project's denies apply whichever way the editor started corvid.
type SessionConfig struct {
	Permissions Permissions
	MCPServers  []mcp.Server
	// Sandbox confines the session's shell commands (zero: unconfined).
	Sandbox tool.Sandbox
	// Notices are told to the user when the session starts (ignored
	// settings of an untrusted or changed project file).
	Notices []string
}

// sessionConfig returns the configuration of a session rooted at cwd.
func (a *Agent) sessionConfig(cwd string) (SessionConfig, error) {
	if a.cfg.ForCwd == nil {
		return SessionConfig{Permissions: a.cfg.Permissions, MCPServers: a.cfg.MCPServers}, nil
	}
	sc, err := a.cfg.ForCwd(cwd)
	if err != nil {
		return SessionConfig{}, projectConfigFailure(err)
	}
	return sc, nil
}
