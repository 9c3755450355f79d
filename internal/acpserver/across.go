package acpserver

import (
	"context"
	"time"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/tool"
)

// Questions across daemons (docs/serve.md). On a shared store
// (PostgreSQL) a permission or single-choice question of a turn is also a
// store row (agent.ShareQuestion, ShareChoice), and route, which puts it
// to this daemon's clients and corvid respond, puts it to the other
// daemons too: each one that holds the session routes it among its own
// clients and its own corvid respond (watchShared), as if it were its
// own. Every answer, wherever it is given, is a conditional update of the
// row (agent.Session.AnswerShared), so exactly one wins; the row carries
// who gave it, which the asker records as corvid.dev/answeredBy. The
// asker then drops the row, and every daemon withdraws its requests
// ($/cancel_request). Elicitation forms stay on the asking daemon.

// sharing is how route shares a question with the other daemons.
type sharing struct {
	// share records the question in the store ("" when it is not
	// shared).
	share func(ctx context.Context) (string, error)
	// encode and decode turn route's answer into the row's and back.
	encode func(val any) string
	decode func(answer string) any
}

// sharedTimeout bounds each store call of a shared question.
const sharedTimeout = 10 * time.Second

// sharesAcross reports whether ss's questions are shared with the other
// daemons on its store (a PostgreSQL one). A client that cannot answer
// requests (Gas City) keeps its out-of-band way outside serve.
func (ss *session) sharesAcross() bool {
	return ss.Session != nil && ss.holders != nil && ss.SharesQuestions() &&
		!ss.srv.cannotAnswer() && !ss.srv.keepsTurns()
}

// across is one question of this daemon's, shared in the store.
type across struct {
	ss      *session
	r       *sharing
	id      string
	changed chan struct{} // another daemon answered, maybe
	stop    func()
}

// shareAcross records the question r describes for the other daemons;
// nil when it is not shared (not a shared store, or the store failed:
// then it is asked here only).
func (ss *session) shareAcross(r *sharing) *across {
	if r == nil || ss.Session == nil || !ss.SharesQuestions() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	id, err := r.share(ctx)
	cancel()
	if err != nil || id == "" {
		if err != nil {
			ss.srv.log.Warn("share the question with other daemons", "session", ss.id, "err", err)
		}
		return nil
	}
	x := &across{ss: ss, r: r, id: id, changed: make(chan struct{}, 1)}
	x.stop = ss.WatchSharedQuestions(x.poke)
	x.poke() // an answer before the watch began
	return x
}

func (x *across) poke() {
	select {
	case x.changed <- struct{}{}:
	default:
	}
}

// wake is the channel route waits on (nil, never ready, for no share).
func (x *across) wake() <-chan struct{} {
	if x == nil {
		return nil
	}
	return x.changed
}

// answer reads the row's answer, if another daemon gave one.
func (x *across) answer(ctx context.Context) (reply, bool) {
	rctx, cancel := context.WithTimeout(ctx, sharedTimeout)
	defer cancel()
	a, by, ok, err := x.ss.SharedAnswer(rctx, x.id)
	if err != nil || !ok {
		return reply{}, false
	}
	return reply{val: x.r.decode(a), by: by, valid: true}, true
}

// claim makes rep, an answer given on this daemon, the row's answer
// unless another came first, and returns the one that counts. A store
// that fails keeps rep: the turn has an answer either way.
func (x *across) claim(rep reply) reply {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	won, err := x.ss.AnswerShared(ctx, x.id, x.r.encode(rep.val), rep.by)
	if err != nil || won {
		return rep
	}
	if first, ok := x.answer(ctx); ok {
		return first // another daemon's answer came first
	}
	return rep
}

// drop ends the share: the row goes, and the other daemons withdraw it.
func (x *across) drop() {
	if x == nil {
		return
	}
	x.stop()
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	if err := x.ss.DropShared(ctx, x.id); err != nil {
		x.ss.srv.log.Warn("drop the shared question", "session", x.ss.id, "err", err)
	}
}

// optionOf is the option id of an answer; answerOf the reverse.
func optionOf(a agent.Answer) string {
	switch a {
	case agent.AllowOnce:
		return "allow_once"
	case agent.AllowAlways:
		return "allow_always"
	case agent.RejectAlways:
		return "reject_always"
	}
	return "reject_once"
}

func answerOf(opt string) agent.Answer {
	switch opt {
	case "allow_once":
		return agent.AllowOnce
	case "allow_always":
		return agent.AllowAlways
	case "reject_always":
		return agent.RejectAlways
	}
	return agent.RejectOnce
}

// sharePermission and shareChoice are the sharing of a permission and of
// a single-choice question (the answer a choice's id, "" for none).
func (ss *session) sharePermission(call agent.ToolCall) *sharing {
	return &sharing{
		share:  func(ctx context.Context) (string, error) { return ss.ShareQuestion(ctx, call) },
		encode: func(v any) string { return optionOf(v.(agent.Answer)) },
		decode: func(a string) any { return answerOf(a) },
	}
}

func (ss *session) shareChoice(q tool.ChoiceQuestion) *sharing {
	return &sharing{
		share:  func(ctx context.Context) (string, error) { return ss.ShareChoice(ctx, q) },
		encode: func(v any) string { return v.(string) },
		decode: func(a string) any {
			for _, c := range q.Choices {
				if c.ID == a {
					return a
				}
			}
			return "" // not one of ours: no answer given
		},
	}
}

// watchShared puts the questions other daemons' turns ask in the
// session to this daemon's clients that hold it, until the last of them
// lets go (stopShared).
func (h *holders) watchShared(as *agent.Session) {
	if !as.SharesQuestions() {
		return
	}
	stop := as.WatchSharedQuestions(func() { h.syncShared(as) })
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		stop()
		return
	}
	h.sharedStop = stop
	h.mu.Unlock()
}

// syncShared routes what is newly open, and withdraws what is no longer.
func (h *holders) syncShared(as *agent.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	qs, err := as.OpenSharedQuestions(ctx)
	cancel()
	if err != nil {
		return
	}
	open := map[string]bool{}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.members) == 0 {
		return
	}
	if h.remote == nil {
		h.remote = map[string]context.CancelFunc{}
	}
	for _, q := range qs {
		open[q.ID] = true
		if _, asked := h.remote[q.ID]; asked {
			continue
		}
		qctx, cancel := context.WithCancel(context.Background())
		h.remote[q.ID] = cancel
		go h.members[0].answerShared(qctx, as, q)
	}
	for id, cancel := range h.remote {
		if !open[id] {
			cancel() // answered, or its turn stopped waiting
			delete(h.remote, id)
		}
	}
}

// answerShared routes another daemon's question among this daemon's
// clients and corvid respond, as route routes its own; the first answer
// here answers it in the store (if no other daemon's came first). ctx
// ends when the question is no longer open.
func (ss *session) answerShared(ctx context.Context, as *agent.Session, q agent.SharedQuestion) {
	var r routed
	var encode func(any) string
	if q.Choice != nil {
		r = ss.choiceRouted(*q.Choice)
		encode = func(v any) string { return v.(string) }
	} else {
		r = ss.permissionRouted(q.Call)
		encode = func(v any) string { return optionOf(v.(agent.Answer)) }
	}
	r.elsewhere = true
	r.claim = func(rep reply) reply {
		actx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
		defer cancel()
		if _, err := as.AnswerShared(actx, q.ID, encode(rep.val), rep.by); err != nil {
			ss.srv.log.Warn("answer another daemon's question", "session", as.ID, "err", err)
		}
		return rep
	}
	ss.route(ctx, r)
}

// stopShared ends watchShared and withdraws its requests (the last
// holder let go).
func (h *holders) stopShared() {
	h.mu.Lock()
	stop := h.sharedStop
	h.sharedStop = nil
	for id, cancel := range h.remote {
		cancel()
		delete(h.remote, id)
	}
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
}
