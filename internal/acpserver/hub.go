package acpserver

import (
	"sync"

	"github.com/corvid-agent/corvid/internal/acp"
)

// Hub is what the connections of one daemon (`corvid serve`) know of each
// other: which connections hold which sessions live. Each connection still
// has a session object of its own (its own front end and replay); the hub
// lets a session/cancel from any of them reach the turn another one runs,
// and session/list say which sessions run and how many clients hold them.
// Fanning one turn's updates out to every attached connection, and putting
// its questions to all of them, are not built (docs/serve.md).
type Hub struct {
	mu      sync.Mutex
	servers map[*Server]struct{}
}

// NewHub returns the hub for the connections of one process.
func NewHub() *Hub { return &Hub{servers: map[*Server]struct{}{}} }

// _meta keys session/list adds under a hub.
const (
	metaRunning  = "corvid.dev/running"
	metaAttached = "corvid.dev/attached"
	// Of a session some connection holds live (the dashboard's list):
	// its model, mode and cost so far ({amount, currency}, when known).
	metaModel = "corvid.dev/model"
	metaMode  = "corvid.dev/mode"
	metaCost  = "corvid.dev/cost"
)

func (h *Hub) join(s *Server) {
	h.mu.Lock()
	h.servers[s] = struct{}{}
	h.mu.Unlock()
}

func (h *Hub) leave(s *Server) {
	h.mu.Lock()
	delete(h.servers, s)
	h.mu.Unlock()
}

// holders are the live session objects of id on every connection, with
// whether each connection's client is still there.
func (h *Hub) holders(id string) (out []*session, present []bool) {
	h.mu.Lock()
	servers := make([]*Server, 0, len(h.servers))
	for s := range h.servers {
		servers = append(servers, s)
	}
	h.mu.Unlock()
	for _, s := range servers {
		s.mu.Lock()
		ss := s.sessions[id]
		s.mu.Unlock()
		if ss == nil || ss.Session == nil {
			continue
		}
		gone := false
		select {
		case <-s.conn.Gone():
			gone = true
		default:
		}
		out = append(out, ss)
		present = append(present, !gone)
	}
	return out, present
}

// cancel cancels the running turn of session id on every connection.
func (h *Hub) cancel(id string) {
	all, _ := h.holders(id)
	for _, ss := range all {
		ss.Cancel()
	}
}

// listMeta says whether session id runs a turn (here, or elsewhere: in
// another process on a shared store), and how many connected clients of
// this daemon hold it live.
func (h *Hub) listMeta(id string, elsewhere bool) acp.Meta {
	all, present := h.holders(id)
	running, attached := elsewhere, 0
	for i, ss := range all {
		running = running || ss.Running()
		if present[i] {
			attached++
		}
	}
	m := acp.Meta{metaRunning: running, metaAttached: attached}
	if len(all) > 0 {
		m[metaModel], m[metaMode] = all[0].ModelAndMode()
		if st := all[0].Stats(); st.CostKnown {
			m[metaCost] = acp.Cost{Amount: st.CostUSD, Currency: "USD"}
		}
	}
	return m
}
