package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/corvid-agent/corvid/internal/store"
)

// Following (docs/store.md, "Live across machines"). On a store that
// notifies (PostgreSQL), a live session shows its front ends the rows
// another process or machine commits into it: a turn that runs on daemon
// A is seen live by the clients attached to the session on daemon B. The
// store says which seq was committed (store.Watch); the session reads the
// rows after the last one it has shown or written (store.EventsAfter) and
// hands their display events to every front end, under the
// conversation's show lock, as Attach's replay and a live turn do: each
// row is shown once, in seq order, none skipped.
//
// Its model context is not touched: the next turn here reloads it, as
// after any other process's turn (syncWithStore).

// follower is a live session's place in the rows others commit.
type follower struct {
	// seq is the last row shown from the store (or read by the load);
	// base is its payload (the next row may be a delta of it). Guarded
	// by conversation.show.
	seq  int64
	base []byte
	stop func()
}

// follow starts following the session's rows from lg (the log it was
// loaded from; nil for a new session).
func (s *Session) follow(lg *Log) {
	c := s.conv
	st := c.log.store
	if st == nil || !st.Notifies() {
		return
	}
	c.show.Lock()
	if lg != nil {
		c.fol.seq, c.fol.base = lg.LastSeq, lg.lastPayload
	}
	c.show.Unlock()
	c.fol.stop = st.Watch(s.ID, func(seq int64) {
		c.show.Lock()
		defer c.show.Unlock()
		c.catchUpLocked(seq, 0)
	})
	if lg != nil {
		// What was committed between the load's read and the watch,
		// after the replay's frames.
		replayDone(c.front)
		c.show.Lock()
		c.catchUpLocked(0, 0)
		c.show.Unlock()
	}
}

// ReplayBuffer is a front end that buffers the replay it is given:
// ReplayDone sends it, and the session calls it before it shows the front
// end a live event after a replay (a row another process committed).
type ReplayBuffer interface{ ReplayDone() }

func replayDone(fe FrontEnd) {
	if r, ok := fe.(ReplayBuffer); ok {
		r.ReplayDone()
	}
}

// runsElsewhere reports whether another process runs a turn of session
// id now (a shared store; false on SQLite or when it cannot tell).
func runsElsewhere(ctx context.Context, st *store.Store, id string) bool {
	if !st.Notifies() {
		return false
	}
	m, err := st.RunningElsewhere(ctx, []string{id})
	return err == nil && m[id]
}

// unfollow stops following (Close).
func (c *conversation) unfollow() {
	if c.fol.stop != nil {
		c.fol.stop()
	}
}

// catchUpLocked shows the front ends the rows after the last one shown or
// written here, through upto (0: every row committed). seq is the
// notified seq (0: unknown, read anyway); a row at or before what was
// shown is not read again. The caller holds c.show.
func (c *conversation) catchUpLocked(seq, upto int64) {
	st := c.log.store
	if st == nil || !st.Notifies() {
		return
	}
	f := &c.fol
	cur, base := f.seq, f.base
	if k := st.OwnThrough(c.log.id); k > cur {
		// This process wrote (and showed) the rows after it: the next row
		// of another process starts afresh (it is no delta of ours).
		// Not knownSeq: it counts rows appended, not seqs committed (it
		// runs ahead of the store when a commit fails).
		cur, base = k, nil
	}
	if (seq != 0 && seq <= cur) || (upto != 0 && upto <= cur) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	last := cur
	next, err := st.EventsAfter(ctx, c.log.id, cur, upto, base, func(r store.Event) error {
		last = r.Seq
		if r.Seq <= st.OwnThrough(c.log.id) {
			return nil // committed here while this read: shown when recorded
		}
		if ev, ok := shownEvent(&r); ok {
			c.front.Emit(ev)
			for _, fe := range c.fans {
				fe.Emit(ev)
			}
		}
		return nil
	})
	if err != nil {
		c.log.log.Warn("read the rows another process committed", "session", c.log.id, "after", cur, "err", err)
		if last > cur {
			f.seq, f.base = last, nil
		}
		return
	}
	f.seq, f.base = last, next
}

// shownEvent is a stored row's display event, as the process that stored
// it showed it; rows of the model context and turn errors show nothing.
func shownEvent(r *store.Event) (Event, bool) {
	switch r.Kind {
	case recordContext, recordContextReset, recordTurnError, recordContextText:
		return Event{}, false
	}
	var ev Event
	if json.Unmarshal(r.Payload, &ev) != nil || ev.Kind == "" {
		return Event{}, false
	}
	return ev, true
}
