package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
)

// conversation is what a session remembers: the model context, the turn
// count, the context meter and cost, and the event log every shown event
// is recorded in first (durable before visible). It is the only part that
// writes the session's store rows.
type conversation struct {
	log   eventLog
	front FrontEnd
	// show orders recording and showing against Attach (attach.go): an
	// event is recorded and handed to every front end under it, so an
	// attaching front end gets each event exactly once, from the store
	// or live. fans are the attached front ends besides front.
	show sync.Mutex
	fans []FrontEnd
	// fol follows the rows other processes commit (follow.go).
	fol follower
	// prompt is the recorded prompt the other front ends are still to be
	// shown (guarded by show; see promptShown in attach.go).
	prompt *shownPrompt
	// fresh: a prompt was recorded and nothing of its turn shown yet.
	fresh atomic.Bool
	// stale: a commit failed during a turn, so the model context may hold
	// what the store does not (and the client was not shown); the next
	// turn reloads it from the store (syncWithStore).
	stale atomic.Bool

	mu       sync.Mutex
	history  []llm.Message
	turns    int
	lastUsed int64     // tokens in context after the last response
	cost     float64   // cumulative USD
	costSeen bool      // cost is known (the model's prices were)
	tokens   llm.Usage // every response's usage, summed
	toolIDs  map[string]bool

	// answered are who answered a question about a tool call, until the
	// call's next update with a status carries it (Session.Answered).
	answeredMu sync.Mutex
	answered   map[string]*Answerer
}

func newConversation(id string, st *store.Store, logger *slog.Logger, front FrontEnd) *conversation {
	return &conversation{log: eventLog{id: id, store: st, log: logger}, front: front, toolIDs: map[string]bool{}}
}

// emit records ev, then delivers it to the front end.
func (c *conversation) emit(ev Event) {
	// Only this log's escape of the text goes out as its wire form (an
	// event a sub-agent's session showed comes here with that
	// session's).
	ev.TextWire = ""
	if ev.Transient {
		// Not logged, so nothing to wait for; shown to every attachment.
		c.show.Lock()
		c.front.Emit(ev)
		for _, f := range c.fans {
			f.Emit(ev)
		}
		c.show.Unlock()
		return
	}
	ev = c.withAnswerer(ev)
	c.show.Lock()
	n, wire := c.log.eventWire(ev)
	ev.TextWire = wire
	first := c.log.store != nil && c.fresh.Swap(false)
	prompt := c.prompt
	c.prompt = nil
	if first {
		// The turn's first shown event: its row goes in now, to be
		// committed with the prompt's rows in one transaction, not two.
		c.log.release()
	}
	var asked chan struct{} // closed when the front end asks Stored (first only)
	if c.log.store != nil {
		// Asked before the event is shown: it waits for the event's own
		// row (and those before it), not for what was recorded since.
		// Shown only if its own row was committed: not if that commit
		// failed, nor if it came after a failed one (the store drops
		// those), so the client is shown exactly what a reload shows.
		stored := func() bool { return c.settle(n) && !c.log.rowFailed(n) }
		if first {
			asked = make(chan struct{})
			var once sync.Once
			ask := stored
			stored = func() bool {
				ok := ask()
				once.Do(func() { close(asked) })
				return ok
			}
		}
		ev.Stored = stored
	}
	if first {
		// Commit it with the prompt's rows now, on this goroutine
		// (store.CommitNow), before the frame is queued: the
		// connection's writer then finds them committed and writes at
		// once, and it can run on this thread as soon as the turn waits
		// below, instead of waiting on another thread for the commit and
		// being woken again. The stream waits for this once per turn
		// (prompt → first chunk, ARCHITECTURE.md §7).
		c.log.settleNow(n, 5*time.Second)
	}
	c.promptShown(prompt, n)
	c.front.Emit(ev)
	for _, f := range c.fans {
		f.Emit(ev)
	}
	c.show.Unlock()
	if first {
		// And let the front end's writer, which asks Stored right before
		// it writes the frame, run before the model's next events: on a
		// busy machine a stream that goes on at once keeps it from the CPU.
		// Bounded, for a front end that writes without asking.
		t := time.NewTimer(firstShownWait)
		select {
		case <-asked:
		case <-t.C:
		}
		t.Stop()
	}
}

// firstShownWait bounds how long a turn's first shown event waits for the
// front end to take it.
var firstShownWait = 2 * time.Millisecond

// settle waits (bounded) until display event n is committed; false if it
// is not.
func (c *conversation) settle(n uint64) bool { return c.log.settle(n, 5*time.Second) }

// recordPrompt stores the user's prompt for replay. The front end from
// shows it already; the session's other front ends are shown it before
// the turn's first shown event (promptShown). Under the show lock, so a
// front end that attaches meanwhile replays it instead.
func (c *conversation) recordPrompt(blocks []Block, turnID string, from FrontEnd) {
	id := NewID("user")
	var evs []Event
	for i := range blocks {
		if b := &blocks[i]; plainText(b) && len(b.Text) > maxContextText {
			// In rows of a bounded size, as a long answer is: replay
			// merges the chunks of one message.
			for rest := b.Text; rest != ""; {
				piece := cutText(rest, maxContextText)
				evs = append(evs, Event{Kind: EventUserChunk, MessageID: id, Content: &Block{Type: BlockText, Text: piece}, Tags: Tags{TurnID: turnID}})
				rest = rest[len(piece):]
			}
			continue
		}
		evs = append(evs, Event{Kind: EventUserChunk, MessageID: id, Content: &blocks[i], Tags: Tags{TurnID: turnID}})
	}
	c.show.Lock()
	defer c.show.Unlock()
	for _, ev := range evs {
		c.log.event(ev)
	}
	c.prompt = c.promptFor(evs, from)
	c.fresh.Store(true)
}

// messages returns a copy of the model context.
func (c *conversation) messages() []llm.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]llm.Message(nil), c.history...)
}

// appendHistory adds messages to the model context and records them; it
// returns the index of the first.
func (c *conversation) appendHistory(msgs ...llm.Message) int {
	c.mu.Lock()
	at := len(c.history)
	c.history = append(c.history, msgs...)
	c.mu.Unlock()
	for _, m := range msgs {
		c.log.context(m)
	}
	return at
}

// resetHistory replaces the model context and records the new one whole.
func (c *conversation) resetHistory(f func([]llm.Message) []llm.Message) {
	c.mu.Lock()
	c.history = f(c.history)
	h := append([]llm.Message(nil), c.history...)
	c.mu.Unlock()
	c.log.contextReset(h)
}

// countTurn counts a prompt and reports whether it is the session's first.
func (c *conversation) countTurn() (first bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turns++
	return c.turns == 1
}

// used is the context meter: tokens in context after the last response.
func (c *conversation) used() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastUsed
}

func (c *conversation) setUsed(n int64) {
	c.mu.Lock()
	c.lastUsed = n
	c.mu.Unlock()
}

// addCost adds usd to the session's cost and returns the total.
func (c *conversation) addCost(usd float64) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cost += usd
	c.costSeen = true
	return c.cost
}

// addTokens adds a response's usage to the session's totals.
func (c *conversation) addTokens(u llm.Usage) {
	c.mu.Lock()
	addTokens(&c.tokens, &u)
	c.mu.Unlock()
}

// Stats is a session's usage so far, for /status and /cost.
type Stats struct {
	Turns       int
	ContextUsed int64
	Tokens      llm.Usage
	CostUSD     float64
	CostKnown   bool
}

func (c *conversation) stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Turns: c.turns, ContextUsed: c.lastUsed, Tokens: c.tokens, CostUSD: c.cost, CostKnown: c.costSeen}
}

// toolCallID returns a session-unique id for a model tool-use id.
func (c *conversation) toolCallID(modelID string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := modelID
	if id == "" {
		id = NewID("call")
	}
	for n := 2; c.toolIDs[id]; n++ {
		id = fmt.Sprintf("%s-%d", modelID, n)
	}
	c.toolIDs[id] = true
	return id
}

// restore makes a folded log the conversation's memory: its model context,
// turn count, tool call ids and context meter (so a full session compacts
// on its next turn).
func (c *conversation) restore(lg *Log) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.history = lg.History
	c.turns = lg.Turns
	for _, id := range lg.ToolIDs {
		c.toolIDs[id] = true
	}
	if lg.Usage != nil {
		c.lastUsed = lg.Usage.Used
		if lg.Usage.CostUSD != nil {
			// The meter shows the session's total: a loaded session goes
			// on from it.
			c.cost, c.costSeen = *lg.Usage.CostUSD, true
		}
	}
	c.tokens = lg.Tokens
	if lg.LastSeq != 0 {
		c.log.knownSeq.Store(lg.LastSeq)
	}
}

// setTitle names the session in the store and tells the front end.
func (c *conversation) setTitle(title string) {
	now := time.Now().UTC()
	if st := c.log.store; st != nil {
		if err := st.UpdateSession(context.Background(), c.log.id, func(ss *store.Session) { ss.Title = title }); err != nil {
			c.log.log.Error("update session title", "session", c.log.id, "err", err)
		}
	}
	c.emit(Event{Kind: EventInfo, Title: title, UpdatedAt: now.Format(time.RFC3339)})
}

// acquire takes the cross-process turn lease for owner; it also returns
// the stored log's last seq, read with the lease, for syncWithStore.
func (c *conversation) acquire(owner string) (func(), int64, error) {
	st := c.log.store
	if st == nil {
		return nil, 0, nil
	}
	// A new turn starts from what the store holds (syncWithStore reloads
	// it after a failed commit): its rows may be committed again.
	st.ClearFailure(c.log.id)
	release, last, err := st.AcquireTurn(context.Background(), c.log.id, owner)
	if errors.Is(err, store.ErrBusy) {
		return nil, 0, fmt.Errorf("%w: %v", ErrBusyElsewhere, err)
	}
	if err != nil {
		return nil, 0, storeFailure("take the turn lease", err)
	}
	return release, last, nil
}

// leaseLost returns why the turn lease could not be written with the
// turn's first rows (another process took it meanwhile), or nil.
func (c *conversation) leaseLost() error {
	if c.log.store == nil {
		return nil
	}
	if err := c.log.store.LeaseLost(c.log.id); err != nil {
		return fmt.Errorf("%w: %v", ErrBusyElsewhere, err)
	}
	return nil
}

// flush waits (bounded) until every recorded row is committed.
func (c *conversation) flush() {
	st := c.log.store
	if st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.Flush(ctx); err != nil {
		c.log.log.Error("flush session store", "session", c.log.id, "err", err)
	}
}

// deleted reports whether the store found the session deleted (by
// another process) since it was opened.
func (c *conversation) deleted() bool {
	return c.log.store != nil && c.log.store.IsDeleted(c.log.id)
}

// storeFailures counts the store's failed commits (0 without a store).
func (c *conversation) storeFailures() uint64 {
	if c.log.store == nil {
		return 0
	}
	return c.log.store.CommitFailures()
}
