package acpserver

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/respond"
)

// Questions in a shared session (`corvid serve`, docs/serve.md): every
// question of a session under a Hub (a permission, an ask_user or exit_plan
// choice, an elicitation) goes to every connection holding the session
// whose client can answer it, to each one that attaches while it is open,
// and, when it can be answered there, to `corvid respond` through the
// daemon's control socket. The first valid answer wins: the others' calls
// are cancelled, which withdraws them with $/cancel_request; the agent
// session records who answered (agent.Session.Answered) on the call's next
// update, which every attachment is shown. Nobody answering within the
// interaction timeout is no answer: a denial. On a shared store
// (PostgreSQL) the same route also puts a permission or a choice to the
// other daemons holding the session, whose clients and corvid respond
// answer it through the store; the first answer anywhere wins (across.go).

// question is one question open in a shared session.
type question struct {
	can func(*session) bool // whether a connection's client can answer it
	// late are the connections that attached while it was open (guarded
	// by the holders' mu); wake tells route there are some.
	late []*session
	wake chan struct{}
	// Named in session/list's corvid.dev/waiting.
	waiting waitingQuestion
}

// waitingQuestion is one entry of session/list's corvid.dev/waiting.
type waitingQuestion struct {
	// RequestID is its id for `corvid respond` ("" when respond cannot
	// answer it: a form).
	RequestID  string `json:"requestId,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	Title      string `json:"title"`
}

// routed says how to put one question to the answerers.
type routed struct {
	toolCallID, title string
	can               func(*session) bool
	// ask puts the question to one connection's client; valid says its
	// answer counts.
	ask func(ctx context.Context, t *session) (val any, valid bool)
	// respond, when set, puts it to corvid respond too; fromRespond turns
	// that answer into a val.
	respond     *respond.Question
	fromRespond func(respond.Answer) any
	// notice is what a connected client that cannot answer requests (Gas
	// City) is shown instead: how to answer with corvid respond.
	notice func(respond.Question) string
	// share, when set, shares the question with the other daemons on a
	// shared store (across.go).
	share *sharing
	// elsewhere: another daemon's question, routed here for its asker
	// (across.go answerShared); claim hands the answer to the store, and
	// the asker records who answered.
	elsewhere bool
	claim     func(reply) reply
}

// reply is one answerer's answer.
type reply struct {
	val   any
	by    agent.Answerer
	valid bool
}

// respondAnswerer is the answeredBy of an answer given with corvid respond.
func (s *Server) respondAnswerer() agent.Answerer {
	return agent.Answerer{Name: "corvid-respond", Title: "corvid respond", Version: s.opts.Version}
}

// answerer is the answeredBy of this connection's client: its clientInfo,
// or, when it sent none, the name "unknown" and an empty version.
func (s *Server) answerer() agent.Answerer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ci := s.clientInfo; ci != nil {
		return agent.Answerer{Name: ci.Name, Title: ci.Title, Version: ci.Version}
	}
	return agent.Answerer{Name: "unknown"}
}

// route puts a question as r says and waits for the first valid answer;
// ok is false when none came before ctx ended or the interaction timeout
// passed.
func (ss *session) route(ctx context.Context, r routed) (val any, ok bool) {
	qctx, cancel := context.WithCancel(ctx)
	if t := ss.srv.opts.InteractionTimeout; t > 0 {
		qctx, cancel = context.WithTimeoutCause(ctx, t, fmt.Errorf("%w after %s", respond.ErrTimeout, t))
	}
	defer cancel() // withdraws every question still open
	// corvid respond's wait, ended with the reason it is told.
	rctx, withdraw := context.WithCancelCause(qctx)
	defer withdraw(nil)
	q := &question{can: r.can, wake: make(chan struct{}, 1), waiting: waitingQuestion{ToolCallID: r.toolCallID, Title: r.title}}
	results := make(chan reply, 8)
	send := func(ctx context.Context, rep reply) {
		select {
		case results <- rep:
		case <-ctx.Done(): // route returned
		}
	}
	// asking is closed once corvid respond's wait is settled; notice is
	// for clients that cannot answer requests.
	asking, notice := ss.askRespond(rctx, r, q, send)
	var x *across // the question's row, for the other daemons
	if !r.elsewhere {
		x = ss.shareAcross(r.share)
		defer x.drop() // after the answer: the other daemons withdraw it
	}
	h := ss.holders
	h.openQuestion(q)
	ss.srv.opts.Hub.changed() // session/list: it waits (watch.go)
	defer func() {
		h.closeQuestion(q)
		ss.srv.opts.Hub.changed()
	}()
	asked := map[*session]bool{}
	start := func(t *session) {
		if asked[t] {
			return
		}
		asked[t] = true
		if t.srv.cannotAnswer() {
			if notice != "" {
				t.say(notice) // Gas City: the way to answer, in the conversation
			}
			return
		}
		if !r.can(t) {
			return
		}
		go func() {
			v, valid := r.ask(qctx, t)
			send(qctx, reply{val: v, by: t.srv.answerer(), valid: valid})
		}()
	}
	for _, t := range h.connected() {
		start(t)
	}
	// won settles the question with rep; here says it was given on this
	// daemon (and is claimed in the store, where another may have won).
	won := func(rep reply, here bool) (any, bool) {
		switch {
		case x != nil && here:
			rep = x.claim(rep) // the first answer of every daemon's
		case r.claim != nil:
			rep = r.claim(rep)
		}
		if ss.Session != nil && !r.elsewhere {
			ss.Session.Answered(r.toolCallID, rep.by)
		}
		withdraw(fmt.Errorf("%w, by %s", respond.ErrAnsweredElsewhere, rep.by.Name))
		if asking != nil {
			<-asking // corvid respond is told so from now on
		}
		return rep.val, true
	}
	for {
		select {
		case <-q.wake:
			for _, t := range h.takeLate(q) {
				start(t)
			}
		case <-x.wake():
			if rep, ok := x.answer(qctx); ok {
				return won(rep, false) // another daemon's
			}
		case rep := <-results:
			if rep.valid {
				return won(rep, true)
			}
		case <-qctx.Done():
			return nil, false
		}
	}
}

// askRespond puts the question to corvid respond through the daemon's
// control socket, when r offers it there: asking is closed once that wait
// is settled (nil when not asked), notice tells a client that cannot
// answer requests how to answer.
func (ss *session) askRespond(rctx context.Context, r routed, q *question, send func(context.Context, reply)) (asking chan struct{}, notice string) {
	if r.respond == nil {
		return nil, ""
	}
	b, err := ss.srv.broker()
	if err != nil {
		ss.srv.log.Error("control socket", "err", err)
		return nil, ""
	}
	rq := *r.respond
	rq.ID = b.NewID()
	q.waiting.RequestID = rq.ID
	if r.notice != nil {
		notice = r.notice(rq)
	}
	asking = make(chan struct{})
	go func() {
		defer close(asking)
		a, err := b.Ask(rctx, rq, 0)
		send(rctx, reply{val: r.fromRespond(a), by: ss.srv.respondAnswerer(), valid: err == nil})
	}()
	return asking, notice
}

// openQuestion and closeQuestion keep the questions open now, so that a
// connection that attaches meanwhile is asked too (offer) and session/list
// says the session waits.
func (h *holders) openQuestion(q *question) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending == nil {
		h.pending = map[*question]struct{}{}
	}
	h.pending[q] = struct{}{}
}

func (h *holders) closeQuestion(q *question) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.pending, q)
}

// offer puts the open questions to ss, which just attached.
func (h *holders) offer(ss *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for q := range h.pending {
		q.late = append(q.late, ss)
		select {
		case q.wake <- struct{}{}:
		default: // route has yet to take the last wake
		}
	}
}

// takeLate returns the connections that attached since route last looked.
func (h *holders) takeLate(q *question) []*session {
	h.mu.Lock()
	defer h.mu.Unlock()
	late := q.late
	q.late = nil
	return late
}

// waiting lists the questions open now, by request id.
func (h *holders) waiting() []waitingQuestion {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]waitingQuestion, 0, len(h.pending))
	for q := range h.pending {
		out = append(out, q.waiting)
	}
	slices.SortFunc(out, func(a, b waitingQuestion) int {
		return cmp.Or(cmp.Compare(a.RequestID, b.RequestID), cmp.Compare(a.ToolCallID, b.ToolCallID))
	})
	return out
}

// shared reports whether questions are routed (serve).
func (ss *session) shared() bool { return ss.srv.opts.Hub != nil && ss.holders != nil }

// anyHolder reports whether some connected holder's client satisfies ok.
func (ss *session) anyHolder(ok func(*session) bool) bool {
	return slices.ContainsFunc(ss.holders.present(), ok)
}

// elicitCaps are the elicitation modes this connection's client
// advertised.
func (s *Server) elicitCaps() (form, url bool) {
	if s.cannotAnswer() {
		return false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clientCaps == nil || s.clientCaps.Elicitation == nil {
		return false, false
	}
	el := s.clientCaps.Elicitation
	return el.Form != nil, el.URL != nil
}

// metaAnsweredBy is the _meta key of a tool_call_update that says who
// answered the call's question: the client's clientInfo.
const metaAnsweredBy = "corvid.dev/answeredBy"

// answeredBy is its value: the answerer as ACP's Implementation.
func answeredBy(a *agent.Answerer) acp.Implementation {
	return acp.Implementation{Name: a.Name, Title: a.Title, Version: a.Version}
}
