package agent

import (
	"context"
	"time"
)

// One live owner per session. The same session may be loaded in two corvid
// processes (an editor that re-spawns its agent, or two editors). The store
// lease keeps their turns from overlapping; this keeps each turn from
// running on stale memory: before a turn, a session whose stored log grew
// behind its back (another process ran a turn) reloads its model context
// from the store, so the next model request holds every stored turn.

// syncWithStore reloads the model context if another process appended to
// the session since this process last looked: last is the stored log's
// last seq, read under the lease (acquire).
func (c *conversation) syncWithStore(last int64) error {
	st := c.log.store
	if st == nil {
		return nil
	}
	known := c.log.knownSeq.Load()
	if stale := c.stale.Swap(false); last == known && !stale {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lg, err := FoldStored(ctx, st, c.log.id)
	if err != nil {
		return storeFailure("catch up", err)
	}
	c.restore(lg)
	if known != 0 {
		c.log.log.Info("session changed in another process; reloaded its history", "session", c.log.id, "seq", lg.LastSeq)
	}
	return nil
}
