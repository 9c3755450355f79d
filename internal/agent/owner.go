package agent

import (
	"context"
	"fmt"
	"time"
)

// One live owner per session. The same session may be loaded in two corvid
// processes (an editor that re-spawns its agent, or two editors). The store
// lease keeps their turns from overlapping; this keeps each turn from
// running on stale memory: before a turn, a session whose stored log grew
// behind its back (another process ran a turn) reloads its model context
// from the store, so the next model request holds every stored turn.

// syncWithStore reloads the model context if another process appended to
// the session since this process last looked. It runs under the lease.
func (s *Session) syncWithStore() error {
	if s.store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	last, err := s.store.LastSeq(ctx, s.ID)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	known := s.knownSeq.Load()
	if last == known {
		return nil
	}
	events, err := s.store.Events(ctx, s.ID)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	s.restoreLog(Fold(events))
	if known != 0 {
		s.agent.cfg.Logger.Info("session changed in another process; reloaded its history", "session", s.ID, "events", len(events))
	}
	return nil
}

// appended counts one event this process stored for the session: the
// stored log then ends one seq further, unless another process wrote too.
func (s *Session) appended() { s.knownSeq.Add(1) }

// restoreLog makes a folded log the session's memory: its model context,
// turn count, tool call ids and context meter (so a full session compacts
// on its next turn).
func (s *Session) restoreLog(lg *Log) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = lg.History
	s.turns = lg.Turns
	for _, id := range lg.ToolIDs {
		s.toolIDs[id] = true
	}
	if lg.Usage != nil {
		s.lastUsed = lg.Usage.Used
	}
	if lg.LastSeq != 0 {
		s.knownSeq.Store(lg.LastSeq)
	}
}
