package agent

import (
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/tool"
)

// Permissions is the operator's and the configuration's say over tool calls.
type Permissions struct {
	Rules *permission.Rules // configured allow/ask/deny rules; nil for none
	Yolo  bool              // --yolo: everything runs except denies
	Allow []string          // --allow, in rule syntax
	Mode  permission.Mode   // the default mode of new sessions
}

// gate is a session's permission gate: the operator's and the
// configuration's say, and the "always" answers the user gave.
type gate struct {
	perms  Permissions        // from the session's project config and the launch flags
	memory *permission.Memory // "always" answers (safe for concurrent use)
}

// permit runs the permission gate: rules, mode, remembered answers and
// operator flags decide, or the user is asked.
func (t *Turn) permit(tl tool.Tool, pv tool.Preview, call ToolCall) (bool, string) {
	s := t.s
	g := &s.gate
	d := permission.Decide(permission.Input{Tool: tool.PermissionName(tl), Preview: pv, Roots: s.env.Roots, Mode: s.settings.view().mode,
		Rules: g.perms.Rules, Memory: g.memory, Yolo: g.perms.Yolo, Allow: g.perms.Allow})
	switch d.Action {
	case permission.Allow:
		return true, ""
	case permission.Deny:
		why := d.Reason
		if why == "" {
			why = "denied by configuration"
		}
		return false, "permission denied: " + why
	}
	call.AlwaysLabel = permission.AlwaysLabel(tool.PermissionName(tl), pv)
	ans, err := s.front.RequestPermission(t.ctx, call)
	if r, ok := err.(*Refusal); ok {
		return false, "permission refused: " + r.Reason
	}
	if err != nil {
		return false, "permission request failed: the user could not be asked"
	}
	switch ans {
	case AllowAlways:
		g.memory.Remember(tool.PermissionName(tl), pv, permission.Allow)
	case RejectAlways:
		g.memory.Remember(tool.PermissionName(tl), pv, permission.Deny)
	}
	if !ans.Allowed() {
		return false, "the user rejected this tool call"
	}
	return true, ""
}
