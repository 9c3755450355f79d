package acpserver

import (
	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// Drain turns (internal/agent/worker.go, docs/subagents.md): a turn the
// agent starts by itself when detached workers finished while the session
// was idle. It has no session/prompt and so no response: the agent opens
// it with agent.EventDrainStarted and closes it with agent.EventDrainEnded.
// In CodeBuddy's vocabulary (codebuddy.go) they are session_info_updates
// whose _meta holds the opener (unsolicitedTurn) and the closer
// (sessionEnd), both standard ACP v1 updates, and every update between
// them carries the turn's requestId. In CodeBuddy's frames the dialect's
// session_end follows the closer, as it follows every turn.

// drainEnded sends session_end after a drain turn's closer (frames only).
func (ss *session) drainEnded(d *agent.Drain, turn map[string]any) {
	stop := ""
	if d != nil {
		stop = d.StopReason
	}
	ss.sessionEnd(stop, acp.Meta(turn))
}
