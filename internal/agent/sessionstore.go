package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/corvid-agent/corvid/internal/store"
)

// ErrSessionNotFound is returned for a session id the store does not know.
var ErrSessionNotFound = errors.New("session not found")

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
		return nil, storeFailure("open", err)
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
// prompt continues with full memory) and, when o.Replay is set, gives it
// the display history as the log is read, before the session starts.
func (a *Agent) LoadSession(ctx context.Context, o SessionOptions) (*Session, error) {
	st, err := a.openStore()
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, ErrSessionNotFound
	}
	meta, err := st.GetSession(ctx, o.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrSessionNotFound
	}
	if err != nil {
		return nil, storeFailure("read the session", err)
	}
	sc, err := a.sessionConfig(o.Cwd)
	if err != nil {
		return nil, err
	}
	if a.Model() == nil {
		return nil, ErrNoModel // before any replay: newSession would refuse
	}
	var lg *Log
	if o.Replay != nil {
		lg, err = foldStream(ctx, st, o.ID, o.ReplayTextMax, o.Replay, runsElsewhere(ctx, st, o.ID))
	} else {
		lg, err = FoldStored(ctx, st, o.ID)
	}
	if err != nil {
		return nil, storeFailure("read the events", err)
	}
	// The session starts after the log is read: it starts work of its
	// own (the system prompt, MCP servers) that would compete with the
	// read, and tells the front end nothing meanwhile.
	o.profile = StoredProfile(meta)
	s, err := a.newSession(o, st, sc)
	if err != nil {
		return nil, err
	}
	if m := s.settings.restore(meta); m != nil {
		s.env.Images = m.Info().Images
	}
	s.conv.restore(lg)
	s.follow(lg)
	if o.Cwd != meta.Cwd || !slices.Equal(o.Roots, meta.AdditionalDirs) {
		_ = st.UpdateSession(ctx, o.ID, func(ss *store.Session) { ss.Cwd, ss.AdditionalDirs = o.Cwd, o.Roots })
	}
	if lg.Team != nil {
		// C39: after the history, the team's current status (members
		// that were running when corvid stopped are interrupted).
		s.sub.team.restore(lg.Team)
		if st := s.sub.team.status(); st != nil && o.Replay != nil {
			o.Replay(Event{Kind: EventTeam, Tags: Tags{Team: st}})
		}
	}
	return s, nil
}

// SessionInfo describes a stored session.
type SessionInfo struct {
	ID             string
	Cwd            string
	AdditionalDirs []string
	Title          string
	Model, Mode    string // as last recorded (a live session may differ)
	UpdatedAt      time.Time
}

// ListSessions lists stored sessions, newest first.
func (a *Agent) ListSessions(ctx context.Context, cwd, cursor string) ([]SessionInfo, string, error) {
	st, err := a.openStore()
	if err != nil || st == nil {
		return nil, "", err
	}
	list, next, err := st.List(ctx, store.ListOptions{Cwd: cwd, Cursor: cursor})
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", err
	}
	if err != nil {
		return nil, "", storeFailure("list", err)
	}
	out := make([]SessionInfo, 0, len(list))
	for _, ss := range list {
		out = append(out, SessionInfo{ID: ss.ID, Cwd: ss.Cwd, AdditionalDirs: ss.AdditionalDirs, Title: ss.Title, Model: ss.Model, Mode: ss.Mode, UpdatedAt: ss.UpdatedAt})
	}
	return out, next, nil
}

// RunningElsewhere reports which of ids run a turn in another process or
// on another machine now, as a shared store (PostgreSQL) knows it from
// its lease rows; nil on a store that does not say (SQLite).
func (a *Agent) RunningElsewhere(ctx context.Context, ids []string) (map[string]bool, error) {
	st, err := a.openStore()
	if err != nil || st == nil {
		return nil, err
	}
	return st.RunningElsewhere(ctx, ids)
}

// ErrBadCursor is returned by ListSessions for a cursor it did not issue.
var ErrBadCursor = store.ErrBadCursor

// DeleteSession removes a stored session. Unknown ids are not an error.
func (a *Agent) DeleteSession(ctx context.Context, id string) error {
	st, err := a.openStore()
	if err != nil || st == nil {
		return err
	}
	if err := st.Delete(ctx, id); err != nil {
		return storeFailure("delete", err)
	}
	return nil
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
		return storeFailure("flush", err)
	}
	err = st.Fork(ctx, srcID, store.Session{ID: o.ID, Cwd: o.Cwd, AdditionalDirs: o.Roots})
	if errors.Is(err, store.ErrNotFound) {
		return ErrSessionNotFound
	}
	if err != nil {
		return storeFailure("fork", err)
	}
	return nil
}

func processOwner() string { return fmt.Sprintf("pid%d-%s", os.Getpid(), NewID("o")) }

// Sync makes every row appended so far durable. The ACP writer calls it
// before frames leave, so what a client has seen survives a kill -9; group
// commit keeps it cheap (one commit serves every frame queued meanwhile).
// It does not wait for the text a session holds back to merge (eventLog):
// the frame of such a chunk makes its own row durable when the writer asks
// its Event.Stored, so a frame never waits for chunks recorded after it.
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
	err := st.Sync(ctx)
	if err != nil {
		a.cfg.Logger.Error("session store commit", "err", err)
	}
	// Flush's error goes to whichever caller flushes first (a turn ending
	// may take it); the failure count tells every caller.
	if n := st.CommitFailures(); n != a.syncedFailures.Swap(n) {
		if err == nil {
			err = errors.New("a commit failed")
		}
		return storeFailure("commit", err)
	}
	if err != nil {
		return storeFailure("flush", err)
	}
	return nil
}
