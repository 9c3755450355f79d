package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
)

// ErrSessionNotFound is returned for a session id the store does not know.
var ErrSessionNotFound = errors.New("session not found")

// ErrBusyElsewhere means another corvid process is running a turn of the
// same session.
var ErrBusyElsewhere = errors.New("session is busy in another corvid process")

// emit records ev, then delivers it to the front end.
func (s *Session) emit(ev Event) {
	s.record(ev)
	s.front.Emit(ev)
}

func (s *Session) record(ev Event) {
	if s.store == nil {
		return
	}
	b, err := json.Marshal(ev)
	if err == nil {
		err = s.store.Append(s.ID, string(ev.Kind), b)
	}
	if err == nil {
		s.appended()
	}
	if err != nil {
		s.agent.cfg.Logger.Error("record event", "session", s.ID, "err", err)
	}
}

func (s *Session) recordRaw(kind string, v any) {
	if s.store == nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = s.store.Append(s.ID, kind, b)
	}
	if err == nil {
		s.appended()
	}
	if err != nil {
		s.agent.cfg.Logger.Error("record", "session", s.ID, "kind", kind, "err", err)
	}
}

// appendHistory adds messages to the model context and records them.
func (s *Session) appendHistory(msgs ...llm.Message) {
	s.mu.Lock()
	s.history = append(s.history, msgs...)
	s.mu.Unlock()
	for _, m := range msgs {
		s.recordRaw(recordContext, m)
	}
}

// resetHistory replaces the model context and records the new one whole.
func (s *Session) resetHistory(f func([]llm.Message) []llm.Message) {
	s.mu.Lock()
	s.history = f(s.history)
	h := append([]llm.Message(nil), s.history...)
	s.mu.Unlock()
	s.recordRaw(recordContextReset, h)
}

// recordPrompt stores the user's prompt for replay (the client already
// shows it, so it is not emitted live).
func (s *Session) recordPrompt(blocks []Block) {
	id := NewID("user")
	for i := range blocks {
		s.record(Event{Kind: EventUserChunk, MessageID: id, Content: &blocks[i]})
	}
}

func (s *Session) setTitle(title string) {
	now := time.Now().UTC()
	if s.store != nil {
		if err := s.store.UpdateSession(context.Background(), s.ID, func(ss *store.Session) { ss.Title = title }); err != nil {
			s.agent.cfg.Logger.Error("update session title", "session", s.ID, "err", err)
		}
	}
	s.emit(Event{Kind: EventInfo, Title: title, UpdatedAt: now.Format(time.RFC3339)})
}

// acquire takes the cross-process turn lease.
func (s *Session) acquire() (func(), error) {
	if s.store == nil {
		return nil, nil
	}
	release, err := s.store.Acquire(context.Background(), s.ID, s.agent.owner)
	if errors.Is(err, store.ErrBusy) {
		return nil, fmt.Errorf("%w: %v", ErrBusyElsewhere, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: cannot take the session's turn lease: %v", ErrStore, err)
	}
	return release, nil
}

func (s *Session) flush() {
	if s.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.store.Flush(ctx); err != nil {
		s.agent.cfg.Logger.Error("flush session store", "session", s.ID, "err", err)
	}
}

// ErrStore marks a failure of the session store (its message names the
// database file).
var ErrStore = errors.New("session store")

// openStore opens the store on first use, so start-up stays fast. A failed
// open is retried on the next use: moving a corrupt file aside must not
// need a restart.
func (a *Agent) openStore() (*store.Store, error) {
	if a.cfg.StorePath == "" {
		return nil, nil
	}
	a.stMu.Lock()
	defer a.stMu.Unlock()
	if a.st != nil || a.stClosed {
		return a.st, nil
	}
	st, err := store.Open(a.cfg.StorePath)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStore, err)
	}
	a.st = st
	return st, nil
}

// Close flushes and closes the store.
func (a *Agent) Close() error {
	a.stMu.Lock()
	defer a.stMu.Unlock()
	a.stClosed = true
	if a.st != nil {
		return a.st.Close()
	}
	return nil
}

// LoadSession restores a stored session: its model context (so the next
// prompt continues with full memory) and, for replay, its display history.
func (a *Agent) LoadSession(ctx context.Context, o SessionOptions) (*Session, []Event, error) {
	st, err := a.openStore()
	if err != nil {
		return nil, nil, err
	}
	if st == nil {
		return nil, nil, ErrSessionNotFound
	}
	meta, err := st.GetSession(ctx, o.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, ErrSessionNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	events, err := st.Events(ctx, o.ID)
	if err != nil {
		return nil, nil, err
	}
	sc, err := a.sessionConfig(o.Cwd)
	if err != nil {
		return nil, nil, err
	}
	s, err := a.newSession(o, st, sc)
	if err != nil {
		return nil, nil, err
	}
	s.restoreControls(meta)
	lg := Fold(events)
	s.restoreLog(lg)
	if o.Cwd != meta.Cwd || !sameStrings(o.Roots, meta.AdditionalDirs) {
		_ = st.UpdateSession(ctx, o.ID, func(ss *store.Session) { ss.Cwd, ss.AdditionalDirs = o.Cwd, o.Roots })
	}
	return s, lg.Replay(), nil
}

// SessionInfo describes a stored session.
type SessionInfo struct {
	ID             string
	Cwd            string
	AdditionalDirs []string
	Title          string
	UpdatedAt      time.Time
}

// ListSessions lists stored sessions, newest first.
func (a *Agent) ListSessions(ctx context.Context, cwd, cursor string) ([]SessionInfo, string, error) {
	st, err := a.openStore()
	if err != nil || st == nil {
		return nil, "", err
	}
	list, next, err := st.List(ctx, store.ListOptions{Cwd: cwd, Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	out := make([]SessionInfo, 0, len(list))
	for _, ss := range list {
		out = append(out, SessionInfo{ID: ss.ID, Cwd: ss.Cwd, AdditionalDirs: ss.AdditionalDirs, Title: ss.Title, UpdatedAt: ss.UpdatedAt})
	}
	return out, next, nil
}

// ErrBadCursor is returned by ListSessions for a cursor it did not issue.
var ErrBadCursor = store.ErrBadCursor

// DeleteSession removes a stored session. Unknown ids are not an error.
func (a *Agent) DeleteSession(ctx context.Context, id string) error {
	st, err := a.openStore()
	if err != nil || st == nil {
		return err
	}
	return st.Delete(ctx, id)
}

// ForkSession copies a stored session's history into a new session id.
func (a *Agent) ForkSession(ctx context.Context, srcID string, o SessionOptions) error {
	st, err := a.openStore()
	if err != nil {
		return err
	}
	if st == nil {
		return ErrSessionNotFound
	}
	if err := st.Flush(ctx); err != nil {
		return err
	}
	err = st.Fork(ctx, srcID, store.Session{ID: o.ID, Cwd: o.Cwd, AdditionalDirs: o.Roots})
	if errors.Is(err, store.ErrNotFound) {
		return ErrSessionNotFound
	}
	return err
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func processOwner() string { return fmt.Sprintf("pid%d-%s", os.Getpid(), NewID("o")) }

// Sync makes every event recorded so far durable. The ACP writer calls it
// before frames leave, so what a client has seen survives a kill -9; group
// commit keeps it cheap (one commit serves every frame queued meanwhile).
//
// An error means some event recorded since the last Sync is not stored: the
// caller must not send what reports it (the client would see what a reload
// cannot show).
func (a *Agent) Sync() error {
	a.stMu.Lock()
	st := a.st
	a.stMu.Unlock()
	if st == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := st.Flush(ctx)
	if err != nil {
		a.cfg.Logger.Error("session store commit", "err", err)
	}
	// Flush's error goes to whichever caller flushes first (a turn ending
	// may take it); the failure count tells every caller.
	if n := st.CommitFailures(); n != a.syncedFailures.Swap(n) {
		if err == nil {
			err = errors.New("a commit failed")
		}
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	return nil
}

// storeFailures counts the store's failed commits (0 without a store).
func (s *Session) storeFailures() uint64 {
	if s.store == nil {
		return 0
	}
	return s.store.CommitFailures()
}

// storeFault returns an error once a commit failed after the turn began:
// the turn stops rather than go on with events nobody can reload.
func (t *Turn) storeFault() error {
	if t.s.storeFailures() == t.storeMark {
		return nil
	}
	return fmt.Errorf("%w: events of this turn could not be saved (is the disk full?), so the turn was stopped; see the log for the database error", ErrStore)
}
