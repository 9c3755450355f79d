package acpserver

import (
	"context"
	"sync"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// Attaching (serve, docs/serve.md): a session/load or session/resume of a
// session that another connection of the daemon holds live does not open
// a second agent session on the same store rows. It attaches to the live
// one: the replay, then every event the session shows from then on
// (agent.Session.Attach), so a client that loads a running session follows
// its turn. The connections share the agent session; it closes when the
// last of them lets go (session/close, or its client went away and its
// turn ended).

// holders counts the connections that hold one agent session, and names
// the one whose prompt runs now: its questions go there.
type holders struct {
	mu     sync.Mutex
	n      int
	closed bool
	asker  *session
}

func newHolders() *holders { return &holders{n: 1} }

// join adds a holder; false once the session was closed.
func (h *holders) join() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.n++
	return true
}

// leave drops a holder and reports whether it was the last one.
func (h *holders) leave(ss *session) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.asker == ss {
		h.asker = nil
	}
	h.n--
	if h.n > 0 {
		return false
	}
	h.closed = true
	return true
}

// shared reports whether another connection holds the session too.
func (h *holders) shared() bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n > 1
}

func (h *holders) open() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.closed
}

// prompting records which holder's client sent the running prompt.
func (h *holders) prompting(ss *session) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.asker = ss
	h.mu.Unlock()
}

// askerFor is where ss's questions go: the holder whose client sent the
// running prompt, when that is another connection's, else ss itself.
func (h *holders) askerFor(ss *session) *session {
	if h == nil {
		return ss
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.asker != nil && h.asker != ss {
		return h.asker
	}
	return ss
}

// Close lets go of the session: it detaches this connection and closes
// the agent session only when no other connection holds it.
func (ss *session) Close() {
	if ss.detach != nil {
		ss.detach()
	}
	if ss.holders != nil && !ss.holders.leave(ss) {
		return
	}
	if ss.Session != nil {
		ss.Session.Close()
	}
}

// liveElsewhere finds a live session id that another connection of the
// daemon holds.
func (h *Hub) liveElsewhere(id string, self *Server) *session {
	all, _ := h.holders(id)
	for _, ss := range all {
		if ss.srv != self && ss.holders != nil && ss.holders.open() {
			return ss
		}
	}
	return nil
}

// attach serves session/load (replay) or session/resume on a session
// another connection holds live.
func (s *Server) attach(ctx context.Context, req *acp.LoadSessionRequest, live *session, replay bool) (any, error) {
	if !live.holders.join() {
		return nil, nil // closed meanwhile: the caller loads it from the store
	}
	ss := &session{srv: s, id: req.SessionID, Session: live.Session, holders: live.holders}
	var run *acp.Run
	var replayTo func(agent.Event)
	if replay {
		run = s.conn.NewRun()
		var turns replayTurnMeta
		replayTo = func(ev agent.Event) { ss.replay(run, ev, turns.next(ev)) }
	}
	detach, err := live.Session.Attach(ctx, ss, replayTo, maxTextBytes)
	if run != nil {
		_ = run.Flush()
	}
	if err != nil {
		live.holders.leave(ss)
		return nil, rpcError(s, err)
	}
	ss.detach = detach
	s.mu.Lock()
	s.sessions[req.SessionID] = ss
	s.mu.Unlock()
	c := ss.Controls()
	return acp.Then{
		Result: acp.LoadSessionResponse{Modes: modeState(c), ConfigOptions: s.configOptionsFor(c), Meta: sessionMeta(c)},
		After:  ss.started,
	}, nil
}
