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
// session, and the one whose prompt runs now.
type holders struct {
	mu      sync.Mutex
	members []*session
	closed  bool
	asker   *session
	// pending are the permission questions open now; a connection that
	// attaches meanwhile is asked too (offer).
	pending map[*question]struct{}
	// Other daemons' questions this daemon's clients are asked
	// (sharedask.go): their ids, with what withdraws each, and what
	// stops the watch.
	remote     map[string]context.CancelFunc
	sharedStop func()
}

// question is one permission question put to several connections.
type question struct {
	call agent.ToolCall
	late chan *session // connections that attached while it was open
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
	if h.asker == ss {
		h.asker = nil
	}
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
			continue
		default:
		}
		if !ss.srv.cannotAnswer() {
			out = append(out, ss)
		}
	}
	return out
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
		After: func() {
			ss.started()
			live.holders.offer(ss) // after the response: the client knows the session
		},
	}, nil
}

// askFirst puts a permission question to every connection in targets at
// once, and to any that attaches while it is open. The first answer wins;
// the questions still open are withdrawn (cancelling their calls sends
// $/cancel_request). ok is false when no client answered.
func (h *holders) askFirst(ctx context.Context, targets []*session, call agent.ToolCall) (ans agent.Answer, ok bool) {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := &question{call: call, late: make(chan *session, 4)}
	h.mu.Lock()
	if h.pending == nil {
		h.pending = map[*question]struct{}{}
	}
	h.pending[q] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.pending, q)
		h.mu.Unlock()
	}()
	type result struct {
		ans agent.Answer
		err error
	}
	results := make(chan result, 64)
	ask := func(t *session) {
		go func() {
			a, err := t.askClient(qctx, call)
			results <- result{a, err}
		}()
	}
	for _, t := range targets {
		ask(t)
	}
	for open := len(targets); open > 0; {
		select {
		case t := <-q.late:
			open++
			ask(t)
		case r := <-results:
			if r.err == nil {
				return r.ans, true
			}
			open--
		}
	}
	return agent.RejectOnce, false
}

// offer puts the open permission questions to ss, which just attached.
func (h *holders) offer(ss *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for q := range h.pending {
		select {
		case q.late <- ss:
		default: // a question with that many late attachers waits for them
		}
	}
}
