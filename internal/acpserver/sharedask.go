package acpserver

import (
	"context"
	"time"

	"github.com/corvid-agent/corvid/internal/agent"
)

// Questions across daemons (docs/serve.md). On a shared store
// (PostgreSQL) a permission question of a turn is also a store row
// (agent.ShareQuestion): the daemons that hold the session put it to
// their own clients (watchShared), and every answer, the asker's own
// clients' included, is a conditional update of the row, so exactly one
// wins; the asker then drops the row, and every daemon withdraws its
// requests ($/cancel_request).

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

// sharedTimeout bounds each store call of a shared question.
const sharedTimeout = 10 * time.Second

// askShared asks call here (local, this daemon's way: its clients, or
// out of band) and, through the store, on every other daemon that holds
// the session; the first answer wins. ok is false when the question
// could not be shared (the caller asks here only).
func (ss *session) askShared(ctx context.Context, call agent.ToolCall, local func(context.Context) (agent.Answer, error)) (ans agent.Answer, ok bool) {
	sctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	id, err := ss.ShareQuestion(sctx, call)
	cancel()
	if err != nil || id == "" {
		if err != nil {
			ss.srv.log.Warn("share the question with other daemons", "session", ss.id, "err", err)
		}
		return agent.RejectOnce, false
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
		defer cancel()
		if err := ss.DropShared(dctx, id); err != nil {
			ss.srv.log.Warn("drop the shared question", "session", ss.id, "err", err)
		}
	}()
	// Another daemon's answer: read when the store says the question
	// changed.
	changed := make(chan struct{}, 1)
	stop := ss.WatchSharedQuestions(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer stop()
	changed <- struct{}{} // an answer before the watch began
	lctx, cancelLocal := context.WithCancel(ctx)
	defer cancelLocal()
	localDone := make(chan agent.Answer, 1)
	go func() {
		a, _ := local(lctx)
		localDone <- a
	}()
	for {
		select {
		case <-ctx.Done():
			return agent.RejectOnce, true
		case <-changed:
			rctx, cancel := context.WithTimeout(ctx, sharedTimeout)
			opt, answered, err := ss.SharedAnswer(rctx, id)
			cancel()
			if err != nil || !answered {
				continue
			}
			cancelLocal() // this daemon's requests are withdrawn
			select {
			case <-localDone:
			case <-time.After(sharedTimeout):
			}
			return answerOf(opt), true
		case a := <-localDone:
			if lctx.Err() != nil {
				continue
			}
			// This daemon's answer counts if it is the first.
			actx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
			won, err := ss.AnswerShared(actx, id, optionOf(a))
			if err == nil && !won {
				if opt, answered, err2 := ss.SharedAnswer(actx, id); err2 == nil && answered {
					a = answerOf(opt) // another daemon's answer came first
				}
			}
			cancel()
			return a, true
		}
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

// syncShared asks what is newly open, and withdraws what is no longer.
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
	if h.closed {
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
		go h.answerShared(qctx, as, q)
	}
	for id, cancel := range h.remote {
		if !open[id] {
			cancel() // answered, or its turn stopped waiting
			delete(h.remote, id)
		}
	}
}

// answerShared puts another daemon's question to the clients here; the
// first of them to answer answers it in the store (if no other daemon's
// answer came first).
func (h *holders) answerShared(ctx context.Context, as *agent.Session, q agent.SharedQuestion) {
	targets := h.present()
	if len(targets) == 0 {
		// Nobody here to ask: the next sync (a client's load) asks it.
		h.mu.Lock()
		delete(h.remote, q.ID)
		h.mu.Unlock()
		return
	}
	ans, ok := h.askFirst(ctx, targets, q.Call)
	if !ok || ctx.Err() != nil {
		return
	}
	actx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	_, _ = as.AnswerShared(actx, q.ID, optionOf(ans))
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
