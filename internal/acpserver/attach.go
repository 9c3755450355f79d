package acpserver

import (
	"context"
	"slices"
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

// holders are the connections' session objects that hold one agent
// session.
type holders struct {
	mu      sync.Mutex
	members []*session
	closed  bool
	// pending are the questions open now (questions.go); a connection
	// that attaches meanwhile is asked too (offer).
	pending map[*question]struct{}
	// Other daemons' questions this daemon's clients are asked
	// (across.go): their ids, with what withdraws each, and what
	// stops the watch.
	remote     map[string]context.CancelFunc
	sharedStop func()
}

func newHolders(first *session) *holders { return &holders{members: []*session{first}} }

// join adds a holder; false once the session was closed.
func (h *holders) join(ss *session) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.members = append(h.members, ss)
	return true
}

// leave drops a holder and reports whether it was the last one.
func (h *holders) leave(ss *session) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i := slices.Index(h.members, ss); i >= 0 {
		h.members = slices.Delete(h.members, i, i+1)
	}
	if len(h.members) > 0 {
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
	return len(h.members) > 1
}

func (h *holders) open() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.closed
}

// present are the holders whose client is connected and can answer a
// question.
func (h *holders) present() []*session {
	return slices.DeleteFunc(h.connected(), func(ss *session) bool { return ss.srv.cannotAnswer() })
}

// connected are the holders whose client is connected.
func (h *holders) connected() []*session {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	members := slices.Clone(h.members)
	h.mu.Unlock()
	var out []*session
	for _, ss := range members {
		select {
		case <-ss.srv.conn.Gone():
		default:
			out = append(out, ss)
		}
	}
	return out
}

// Close lets go of the session: it detaches this connection and closes
// the agent session only when no other connection holds it.
func (ss *session) Close() {
	defer ss.srv.opts.Hub.changed()
	if ss.detach != nil {
		ss.detach()
	}
	if ss.holders != nil && !ss.holders.leave(ss) {
		return
	}
	if ss.holders != nil {
		ss.holders.stopShared()
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
	ss := &session{srv: s, id: req.SessionID, Session: live.Session, holders: live.holders}
	if !live.holders.join(ss) {
		return nil, nil // closed meanwhile: the caller loads it from the store
	}
	var run *acp.Run
	var replayTo func(agent.Event)
	if replay {
		run = s.conn.NewRun()
		ss.replayRun = run
		turns := replayTurnMeta{srv: s}
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
	s.takeOver(ctx, live.Session)
	s.mu.Lock()
	s.sessions[req.SessionID] = ss
	s.mu.Unlock()
	c := ss.Controls()
	return acp.Then{
		Result: acp.LoadSessionResponse{Modes: modeState(c), ConfigOptions: s.configOptionsFor(c), Meta: sessionMeta(c)},
		After: func() {
			ss.started()
			live.holders.offer(ss) // after the response: the client knows the session
		},
	}, nil
}

// takeOver applies the owner rule (C56, docs/codebuddy.md) to a session
// this connection loaded or resumed, whether it opened it from the store
// or attached to it live on another connection of the daemon: the
// connection that loaded it last owns it. The owner is recorded with the
// session's settings, so the rule is the same across the daemon's
// connections as across corvid processes sharing the store.
func (s *Server) takeOver(ctx context.Context, as *agent.Session) {
	if err := as.TakeOver(ctx, s.connID); err != nil {
		s.log.Warn("record the session's owner", "session", as.ID, "err", err)
	}
}
