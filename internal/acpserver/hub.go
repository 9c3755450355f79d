package acpserver

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/respond"
)

// Hub is what the connections of one daemon (`corvid serve`) know of each
// other: which connections hold which sessions live. Each connection still
// has a session object of its own (its own front end and replay); the hub
// lets a session/cancel from any of them reach the turn another one runs,
// and session/list say which sessions run and how many clients hold them.
// Attaching (attach.go) fans a session's updates out to every connection
// that holds it, and its questions go to all of them (questions.go).
type Hub struct {
	mu      sync.Mutex
	servers map[*Server]struct{}

	// The daemon's control socket, where corvid respond answers its
	// questions (questions.go); opened on first use.
	brokerOnce sync.Once
	brk        *respond.Broker
	brokerErr  error
	settle     *time.Timer // a sessions_changed notification due (watch.go)
	draining   atomic.Bool // the daemon stops: prompts are refused (hubstop.go)
	answers    initAnswers // initialize's answers, published for relays (initanswers.go)
}

// NewHub returns the hub for the connections of one process.
func NewHub() *Hub { return &Hub{servers: map[*Server]struct{}{}} }

// _meta keys session/list adds under a hub.
const (
	metaRunning  = "corvid.dev/running"
	metaAttached = "corvid.dev/attached"
	// The questions of the session waiting for an answer, when there are
	// any: [{requestId (for corvid respond), toolCallId, title}].
	metaWaiting = "corvid.dev/waiting"
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
	h.changed() // its sessions have one client fewer
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

// listMeta says whether the stored session si runs a turn (here, or
// elsewhere: in another process on a shared store), waits for an answer,
// how many connected clients of this daemon hold it live, and its model
// and mode (live: the session's own; else what the store recorded).
func (h *Hub) listMeta(si agent.SessionInfo, elsewhere bool) acp.Meta {
	all, present := h.holders(si.ID)
	running, attached := elsewhere, 0
	for i, ss := range all {
		running = running || ss.Running()
		if present[i] {
			attached++
		}
	}
	m := acp.Meta{metaRunning: running, metaAttached: attached}
	if si.Model != "" {
		m[metaModel] = si.Model
	}
	if si.Mode != "" {
		m[metaMode] = si.Mode
	}
	if len(all) > 0 {
		if w := all[0].holders.waiting(); len(w) > 0 {
			m[metaWaiting] = w
		}
		m[metaModel], m[metaMode] = all[0].ModelAndMode()
		if st := all[0].Stats(); st.CostKnown {
			m[metaCost] = acp.Cost{Amount: st.CostUSD, Currency: "USD"}
		}
	}
	return m
}

// broker is the daemon's control socket, shared by every connection.
func (h *Hub) broker(place respond.Place, log *slog.Logger) (*respond.Broker, error) {
	h.brokerOnce.Do(func() {
		if place.Dir == "" {
			h.brokerErr = errNoControlDir
			return
		}
		h.brk, h.brokerErr = respond.Listen(place, log)
	})
	return h.brk, h.brokerErr
}

// Close closes the daemon's control socket (its open questions are
// denied). Call it once every connection has ended.
func (h *Hub) Close() {
	h.brokerOnce.Do(func() {}) // none opens after this
	if h.brk != nil {
		_ = h.brk.Close()
	}
}
