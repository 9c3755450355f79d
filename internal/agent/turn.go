package agent

import (
	"context"
	"errors"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
)

// Turn is one prompt being answered.
type Turn struct {
	s         *Session
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	prev      *Turn // a cancelled turn this one waits for
	blocks    []Block
	from      FrontEnd // TurnOptions.From
	tag       TurnTag  // TurnOptions.TurnID, or a drain turn's id
	cancelled bool     // guarded by the session's turnRunner.mu
	drain     bool     // a drain turn (worker.go): a prompt waits for it
	answered  bool     // the front end wrote its answer (guarded by turnRunner.mu)
	release   func()   // the store lease held while the turn runs
	storeMark uint64   // the store's failed commits when the turn began
}

// StopReason is why a turn ended (ACP's values).
type StopReason string

const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// Run answers the turn's prompt. Every event of the turn has been emitted
// when it returns. A cancelled turn returns StopCancelled and no error; a
// model failure returns the error (an *llm.Error is safe to show).
func (t *Turn) Run() (StopReason, error) {
	s := t.s
	defer t.end()
	if stop, err, ready := t.prepare(); !ready {
		return stop, err
	}
	// From here the prompt is stored: a failure is stored with it, for
	// `corvid sessions` (the editor gets it as the prompt's answer).
	t.warnPastedSecret()
	first := s.conv.countTurn()
	stopWatch := t.watchDeletion()
	stop, err := t.answer()
	stopWatch()
	if err == nil && s.conv.deleted() {
		// Deleted while the turn ran: its tools were stopped (the turn
		// was cancelled), and what it did is saved nowhere.
		stop, err = "", errDeletedElsewhere
	}
	if errors.Is(err, ErrDeletedElsewhere) {
		return stop, err // nothing to record it in
	}
	if err != nil {
		s.conv.log.turnError(userText(err))
	}
	if first && stop != StopRefusal && !errors.Is(err, ErrStore) && !errors.Is(err, ErrBusyElsewhere) {
		s.conv.setTitle(titleFrom(t.blocks))
	}
	return stop, err
}

// answer runs the recorded prompt: a slash command, or the model loop.
func (t *Turn) answer() (StopReason, error) {
	s := t.s
	blocks, handled, stop, err := t.expandCommand(t.blocks)
	if handled {
		return stop, err
	}
	msg := s.userMessage(t.ctx, blocks)
	if done := s.takeInbox(); done != "" {
		// Workers that finished since the last turn (worker.go).
		msg.Parts = append([]llm.Part{llm.Text(done)}, msg.Parts...)
	}
	mark := s.conv.appendHistory(msg)

	s.runner.takeFinalOutput() // a submission belongs to the turn that made it
	stop, err = t.loop()
	if err == nil && stop != StopCancelled && stop != StopRefusal {
		t.emitFinalOutput()
	}
	if err == nil {
		// The answer goes out only once the turn's events are stored.
		s.conv.flush()
		if ferr := t.storeFault(); ferr != nil {
			stop, err = "", ferr
		}
	}
	if stop == StopRefusal {
		// The refused prompt and everything after it leave the context.
		s.conv.resetHistory(func(h []llm.Message) []llm.Message { return h[:mark] })
	}
	return stop, err
}

// prepare waits for a cancelled turn before this one, takes the store
// lease, catches up with the store and records the prompt; ready is false
// when the turn ends there (with stop, err).
func (t *Turn) prepare() (stop StopReason, err error, ready bool) {
	s := t.s
	if t.prev != nil && t.prev.drain {
		// A drain turn is not cancelled for a prompt: wait for it.
		select {
		case <-t.prev.done:
		case <-t.ctx.Done():
			return StopCancelled, nil, false
		}
	} else if t.prev != nil {
		select {
		case <-t.prev.done:
		case <-time.After(windDown):
			return "", ErrBusy, false
		case <-t.ctx.Done():
			return StopCancelled, nil, false
		}
	}
	if t.ctx.Err() != nil {
		return StopCancelled, nil, false
	}
	s.runner.emitFrom(t, false)
	var last int64
	if t.release, last, err = s.conv.acquire(s.agent.owner); err != nil {
		return "", err, false
	}
	t.storeMark = s.conv.storeFailures()
	if err := s.conv.syncWithStore(last); err != nil {
		return "", err, false
	}
	s.conv.recordPrompt(t.blocks, t.tag.ID, t.from)
	s.toolbox.awaitMCP(t.ctx)
	if t.ctx.Err() != nil {
		return StopCancelled, nil, false
	}
	return "", nil, true
}

// watchDeletion cancels the turn, stopping its model call and its tools,
// once the store learns that the session was deleted (store.Deleted).
// Call the returned func when the turn's work is done.
func (t *Turn) watchDeletion() (stop func()) {
	st := t.s.conv.log.store
	if st == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-st.Deleted(t.s.conv.log.id):
			t.cancel()
		case <-done:
		}
	}()
	return func() { close(done) }
}

// end releases what the turn held; the session may start the next one.
func (t *Turn) end() {
	t.cancel()
	t.s.conv.flush()
	t.s.conv.promptLeft()
	if t.release != nil && t.s.conv.storeFailures() != t.storeMark {
		t.s.conv.stale.Store(true)
	}
	t.s.runner.emitFrom(t, true)
	if t.release != nil {
		t.release()
	}
	close(t.done)
}

// say emits (and records) a short agent message.
func (t *Turn) say(text string) { t.s.Notify(text) }

// storeFault returns an error once a commit failed after the turn began:
// the turn stops rather than go on with events nobody can reload.
func (t *Turn) storeFault() error {
	if t.s.conv.deleted() {
		return errDeletedElsewhere
	}
	if t.s.conv.storeFailures() == t.storeMark {
		return nil
	}
	if err := t.s.conv.leaseLost(); err != nil {
		// The turn's rows were dropped because another process took the
		// session's lease as this turn started (store.AcquireTurn).
		return err
	}
	return errStoreFault
}

func titleFrom(blocks []Block) string {
	for _, b := range blocks {
		if b.Type == BlockText && b.Text != "" {
			return shorten(b.Text, 80)
		}
	}
	return "New session"
}
