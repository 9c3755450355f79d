package acpserver

import (
	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// The daemon's drain (`corvid serve` on SIGTERM or SIGINT; docs/serve.md):
// the transports stop accepting, the hub refuses new prompts, the turns
// that run may end by themselves until the drain timeout, and then the hub
// interrupts the rest.

// Drain makes every connection of the hub refuse new prompts from now on
// (errStopping); running turns go on.
func (h *Hub) Drain() { h.draining.Store(true) }

// errStopping answers a prompt sent while the daemon drains.
func errStopping() error {
	return acp.NewError(acp.CodeInternalError, "corvid serve is stopping",
		"the daemon is draining: the turns already running may finish, new prompts are refused; prompt again once it runs again")
}

// running is every agent session some connection of the hub holds whose
// turn runs, each once (attached connections share one). As holders does,
// it asks each session outside the connection's lock: a turn's events
// take that lock on their way out.
func (h *Hub) running() []*agent.Session {
	h.mu.Lock()
	servers := make([]*Server, 0, len(h.servers))
	for s := range h.servers {
		servers = append(servers, s)
	}
	h.mu.Unlock()
	seen := map[*agent.Session]bool{}
	var all []*agent.Session
	for _, s := range servers {
		s.mu.Lock()
		for _, ss := range s.sessions {
			if ss.Session != nil && !seen[ss.Session] {
				seen[ss.Session] = true
				all = append(all, ss.Session)
			}
		}
		s.mu.Unlock()
	}
	var out []*agent.Session
	for _, as := range all {
		if as.Running() {
			out = append(out, as)
		}
	}
	return out
}

// Running counts the sessions whose turn runs.
func (h *Hub) Running() int { return len(h.running()) }

// Interrupt ends every running turn: it shows and stores note in the
// session (so the replay says the turn was interrupted, not answered),
// then cancels the turn, which stores what it showed as a cancelled turn
// does. It returns how many it interrupted.
func (h *Hub) Interrupt(note string) int {
	all := h.running()
	for _, s := range all {
		s.Notify(note)
		s.Cancel()
	}
	return len(all)
}
