package agent

import (
	"context"
	"errors"
	"sync"

	"github.com/corvid-agent/corvid/internal/llm"
)

// ErrBusy is returned when a prompt arrives while a live, uncancelled turn
// is running in the same session.
var ErrBusy = errors.New("a turn is already running in this session; cancel it or wait for it to end")

// turnRunner keeps a session's running turn: one at a time, a new one
// waiting (bounded) for a cancelled one to wind down.
type turnRunner struct {
	mu   sync.Mutex
	turn *Turn // the latest turn (running, cancelled or done)
	// finalOutput is submit_output's submission in the running turn.
	finalOutput *string
	// emitting is the turn whose events are emitted now (TurnTag).
	emitting *Turn
	// closed: the session is closing; no drain turn starts (worker.go).
	closed bool
}

// tag names the turn that emits now.
func (r *turnRunner) tag() TurnTag {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.emitting == nil {
		return TurnTag{}
	}
	return r.emitting.tag
}

// emitFrom marks t as the turn that emits now (nil: none); done clears it
// only if it is still t.
func (r *turnRunner) emitFrom(t *Turn, done bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !done:
		r.emitting = t
	case r.emitting == t:
		r.emitting = nil
	}
}

// start registers a turn for blocks; see Session.StartTurn.
func (r *turnRunner) start(s *Session, blocks []Block, o TurnOptions) (*Turn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var prev *Turn
	if t := r.turn; t != nil {
		select {
		case <-t.done:
		default:
			if !t.cancelled && !t.drain {
				return nil, ErrBusy
			}
			prev = t // a cancelled turn winding down, or a drain turn (worker.go)
		}
	}
	ctx, cancel := context.WithCancel(llm.WithHeaders(context.Background(), o.Headers))
	t := &Turn{s: s, ctx: ctx, cancel: cancel, done: make(chan struct{}), prev: prev, blocks: blocks, from: o.From, tag: TurnTag{ID: o.TurnID}}
	r.turn = t
	return t, nil
}

// startDrain registers a drain turn (worker.go) when the session is idle:
// its latest turn ended and, unless it was a drain turn, was answered.
func (r *turnRunner) startDrain(s *Session, rid string) (*Turn, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, false
	}
	if t := r.turn; t != nil {
		select {
		case <-t.done:
		default:
			return nil, false
		}
		if !t.drain && !t.answered {
			return nil, false
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Turn{s: s, ctx: ctx, cancel: cancel, done: make(chan struct{}), tag: TurnTag{DrainID: rid}, drain: true}
	r.turn = t
	return t, true
}

// shut is cancel for the session's Close: no drain turn starts after it.
func (r *turnRunner) shut() *Turn {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	return r.cancel()
}

// cancel cancels the latest turn and every turn it still waits for, and
// returns it (nil when there was none).
func (r *turnRunner) cancel() *Turn {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.turn
	if t != nil {
		t.cancelled = true
		t.cancel()
		for p := t.prev; p != nil; p = p.prev {
			p.cancel()
		}
	}
	return t
}

// submit keeps a final output for the running turn (a later one wins).
func (r *turnRunner) submit(out *string) {
	r.mu.Lock()
	r.finalOutput = out
	r.mu.Unlock()
}

// takeFinalOutput returns and clears the running turn's submission.
func (r *turnRunner) takeFinalOutput() *string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.finalOutput
	r.finalOutput = nil
	return out
}
