package acpserver

import (
	"context"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// metaInterrupted is the session/list _meta key of a session whose last
// turn never ended (agent.ListState): true, or absent.
const metaInterrupted = "corvid.dev/interrupted"

// addStoredState adds to m, the list _meta of a session no turn runs in,
// what its stored log says: whether its last turn was interrupted, and its
// cost so far unless the live session already gave it. A session read
// with an error is listed without them.
func (s *Server) addStoredState(ctx context.Context, si agent.SessionInfo, m acp.Meta) {
	if m[metaRunning] == true {
		return
	}
	ls, err := s.opts.Agent.ListState(ctx, si.ID, si.UpdatedAt)
	if err != nil {
		s.log.Debug("read a listed session's state", "session", si.ID, "err", err)
		return
	}
	if ls.Interrupted {
		m[metaInterrupted] = true
	}
	if _, live := m[metaCost]; !live && ls.CostUSD != nil {
		m[metaCost] = acp.Cost{Amount: *ls.CostUSD, Currency: "USD"}
	}
}
