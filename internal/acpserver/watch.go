package acpserver

import (
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
)

// The sessions list, watched (serve, docs/serve.md): a client that opts in
// at initialize with clientCapabilities._meta["corvid.dev/sessionsChanged"]
// = true gets the extension notification _corvid/sessions_changed (params
// {}) whenever what session/list says may have changed: a session was
// created, loaded, closed or deleted, a turn started or ended, a question
// opened or was answered, a title or the cost changed, a connection left.
// The client then lists again. Changes within listSettle of each other
// make one notification. A client that did not opt in never gets it.

const (
	// MethodSessionsChanged is the list-change notification.
	MethodSessionsChanged = "_corvid/sessions_changed"
	// capSessionsChanged is the clientCapabilities._meta key that opts in.
	capSessionsChanged = "corvid.dev/sessionsChanged"
)

// listSettle batches the changes of one moment into one notification.
const listSettle = 150 * time.Millisecond

// watchesList says whether the client opted in to _corvid/sessions_changed.
func watchesList(caps *acp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	on, _ := caps.Meta[capSessionsChanged].(bool)
	return on
}

// changed notes that the list may have changed; the watchers hear of it
// once the moment settles. Safe on a nil hub (stdio).
func (h *Hub) changed() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.settle == nil {
		h.settle = time.AfterFunc(listSettle, h.announce)
	}
}

// announce sends _corvid/sessions_changed to every connection that opted in.
func (h *Hub) announce() {
	h.mu.Lock()
	h.settle = nil
	var to []*Server
	for s := range h.servers {
		to = append(to, s)
	}
	h.mu.Unlock()
	for _, s := range to {
		s.mu.Lock()
		watch := s.initialized && watchesList(s.clientCaps)
		s.mu.Unlock()
		if watch {
			_ = s.conn.Notify(MethodSessionsChanged, struct{}{})
		}
	}
}
