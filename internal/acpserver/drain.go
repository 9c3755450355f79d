package acpserver

import (
	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// Drain turns (internal/agent/worker.go, docs/subagents.md): a turn the
// agent starts by itself when detached workers finished while the session
// was idle. It has no session/prompt and so no response: it opens with a
// session_info_update tagged codebuddy.ai/unsolicitedTurn and closes with
// one tagged codebuddy.ai/sessionEnd, both standard ACP v1 updates, and
// every update between them carries its codebuddy.ai/requestId. Under
// --compat codebuddy the dialect's session_end follows the closer, as it
// follows every turn.

// drainEnded sends session_end after a drain turn's closer (compat only).
func (ss *session) drainEnded(meta map[string]any, turn map[string]any) {
	end, _ := meta[agent.SessionEndMeta].(map[string]any)
	stop, _ := end["stopReason"].(string)
	ss.sessionEnd(stop, acp.Meta(turn))
}
