package agent

import (
	"encoding/json"
	"fmt"

	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/tool"
)

// SessionStart is what Config.SessionContext learns of a session that
// starts (or switches agent profile).
type SessionStart struct {
	Cwd   string
	Roots []string // cwd first, then the additional directories
	// ReadFile reads a file named by an agent profile (a seed region) as
	// the read tool would read it for the model, except that nobody is
	// asked: the path (relative to Cwd) must lie inside Roots once symbolic
	// links are resolved, no deny rule may cover it, and it must be a
	// regular file. Otherwise it says why it refused.
	ReadFile func(path string) (string, error)
	// Shell is the program and arguments that run a command line as the
	// shell tool would: inside the session's sandbox when it has one.
	Shell func(cmdline string) (name string, args []string)
}

// seedReadMax bounds what ReadFile returns; profiles cap a region further.
const seedReadMax = 1 << 20

// sessionStart describes s for Config.SessionContext.
func (s *Session) sessionStart() SessionStart {
	return SessionStart{Cwd: s.env.Cwd, Roots: s.env.Roots, ReadFile: s.readForProfile, Shell: s.env.ShellCommand}
}

// readForProfile is SessionStart.ReadFile. The decision is the read
// tool's in default mode with the configured rules and the operator's
// --allow list; what would ask a person is refused, since a profile's
// file is read before anyone could answer, and neither yolo nor an
// "always" answer stands in for that answer.
func (s *Session) readForProfile(path string) (string, error) {
	env := s.env
	p := env.Resolve(path)
	input, _ := json.Marshal(map[string]string{"path": p})
	read := tool.Read{}
	pv := read.Describe(&env, input)
	d := permission.Decide(permission.Input{Tool: tool.PermissionName(read), Preview: pv, Roots: env.Roots,
		Mode: permission.ModeDefault, Rules: s.gate.perms.Rules, Allow: s.gate.perms.Allow})
	if d.Action != permission.Allow {
		why := d.Reason
		if d.Action == permission.Ask {
			why += "; a profile's files are read without asking, so only files the read tool reads without a question are"
		}
		return "", fmt.Errorf("refused: %s", why)
	}
	// Open the path that was judged (links resolved), not one a link
	// swapped in since.
	b, _, err := tool.ReadPrefix(tool.RealPath(p), seedReadMax)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
