package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Lease timing. A holder refreshes its heartbeat every leaseHeartbeat; a
// lease not refreshed for leaseTTL is abandoned and may be taken.
const (
	leaseTTL       = 15 * time.Second
	leaseHeartbeat = 5 * time.Second
)

// leaseState is this Store's identity as a lease holder and the leases it
// holds.
type leaseState struct {
	holder string // "pid-random": unique to this Store, even within one process
	host   string
	pid    int
	ttl    time.Duration

	mu   sync.Mutex
	held map[string]string // session id → owner, for leases this Store holds
	stop chan struct{}
	done chan struct{}
}

func (l *leaseState) init() error {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	l.host = host
	l.pid = os.Getpid()
	l.holder = fmt.Sprintf("%d-%s", l.pid, randomHex(8))
	l.ttl = leaseTTL
	l.held = make(map[string]string)
	l.stop = make(chan struct{})
	l.done = make(chan struct{})
	return nil
}

// BusyError says who holds a session's lease. It matches [ErrBusy] with
// errors.Is.
type BusyError struct {
	SessionID string
	Owner     string
	Host      string
	PID       int
	Heartbeat time.Time
	Self      bool // held by this very Store
}

func (e *BusyError) Error() string {
	if e.Self {
		return fmt.Sprintf("session %s is already in use in this process (%s)", e.SessionID, e.Owner)
	}
	return fmt.Sprintf("session %s is in use by another corvid process (%s, pid %d on %s); close it there first, or wait %s after that process dies",
		e.SessionID, e.Owner, e.PID, e.Host, leaseTTL)
}

func (e *BusyError) Is(target error) bool { return target == ErrBusy }

const (
	queryLeaseHolder = `SELECT holder, owner, host, pid, heartbeat FROM leases WHERE session_id = ?`
	queryLeaseUpsert = `INSERT INTO leases (session_id, holder, owner, host, pid, heartbeat) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, owner = excluded.owner, host = excluded.host,
	pid = excluded.pid, heartbeat = excluded.heartbeat`
	queryLeaseDelete = `DELETE FROM leases WHERE session_id = ? AND holder = ?`
)

// Acquire takes the run lease of a session, so that the same session loaded
// in two corvid processes (or twice in one) cannot run turns at the same
// time. owner describes the holder for the error the next caller sees (for
// example "corvid acp"). A second Acquire before release fails with a
// [*BusyError] (errors.Is(err, ErrBusy)). A lease is stale, and taken over,
// when its heartbeat is older than 15 s or its process is gone from this
// host. The Store refreshes the heartbeat while the lease is held; release
// is idempotent, and Close releases every lease still held.
func (s *Store) Acquire(ctx context.Context, sessionID, owner string) (release func(), err error) {
	return s.acquire(ctx, sessionID, owner, nil)
}

// AcquireTurn is Acquire that also returns what [Store.LastSeq] would
// right after it, read in the lease's own transaction: a turn's start pays
// for one transaction instead of two.
func (s *Store) AcquireTurn(ctx context.Context, sessionID, owner string) (release func(), lastSeq int64, err error) {
	if err := s.flushSession(ctx, sessionID); err != nil {
		return nil, 0, fmt.Errorf("acquire session %s: %w", sessionID, err)
	}
	release, err = s.acquire(ctx, sessionID, owner, &lastSeq)
	return release, lastSeq, err
}

// acquire takes the lease; with lastSeq set it also reads the session's
// last seq in the same transaction.
func (s *Store) acquire(ctx context.Context, sessionID, owner string, lastSeq *int64) (release func(), err error) {
	l := &s.lease
	if owner == "" {
		owner = "corvid"
	}
	l.mu.Lock()
	if cur, ok := l.held[sessionID]; ok {
		l.mu.Unlock()
		return nil, &BusyError{SessionID: sessionID, Owner: cur, Host: l.host, PID: l.pid, Heartbeat: s.now(), Self: true}
	}
	// Reserve the slot in this Store while the transaction runs, so two
	// goroutines of this process cannot both pass the check below.
	l.held[sessionID] = owner
	l.mu.Unlock()

	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var cur BusyError
		var holder string
		var hb int64
		sel, err := s.txStmt(ctx, tx, queryLeaseHolder)
		if err != nil {
			return err
		}
		err = sel.QueryRowContext(ctx, sessionID).Scan(&holder, &cur.Owner, &cur.Host, &cur.PID, &hb)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case holder == l.holder:
			// Ours, yet not held: a release whose delete failed (a full
			// disk). It must not lock the session out for leaseTTL.
		default:
			cur.SessionID = sessionID
			cur.Heartbeat = time.Unix(0, hb)
			if !s.leaseStale(cur) {
				return &cur
			}
		}
		upsert, err := s.txStmt(ctx, tx, queryLeaseUpsert)
		if err != nil {
			return err
		}
		if _, err = upsert.ExecContext(ctx, sessionID, l.holder, owner, l.host, l.pid, s.now().UnixNano()); err != nil || lastSeq == nil {
			return err
		}
		last, err := s.txStmt(ctx, tx, queryLastSeq)
		if err != nil {
			return err
		}
		return last.QueryRowContext(ctx, sessionID).Scan(lastSeq)
	})
	if err != nil {
		l.mu.Lock()
		delete(l.held, sessionID)
		l.mu.Unlock()
		return nil, fmt.Errorf("acquire session %s: %w", sessionID, err)
	}
	var once sync.Once
	return func() { once.Do(func() { s.release(sessionID) }) }, nil
}

// leaseStale reports whether another holder's lease may be taken.
func (s *Store) leaseStale(cur BusyError) bool {
	if s.now().Sub(cur.Heartbeat) > s.lease.ttl {
		return true
	}
	return cur.Host == s.lease.host && !processAlive(cur.PID)
}

func (s *Store) release(sessionID string) {
	l := &s.lease
	ctx, cancel := context.WithTimeout(context.Background(), busyTimeout)
	defer cancel()
	// Only our own row: if the lease was taken over after we stalled, it
	// is no longer ours to delete.
	_ = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		del, err := s.txStmt(ctx, tx, queryLeaseDelete)
		if err != nil {
			return err
		}
		_, err = del.ExecContext(ctx, sessionID, l.holder)
		return err
	})
	l.mu.Lock()
	delete(l.held, sessionID)
	l.mu.Unlock()
}

func (s *Store) releaseAll() {
	l := &s.lease
	l.mu.Lock()
	n := len(l.held)
	l.held = make(map[string]string)
	l.mu.Unlock()
	if n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), busyTimeout)
	defer cancel()
	_ = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE holder = ?`, l.holder)
		return err
	})
}

// heartbeatLoop refreshes the leases this Store holds until Close.
func (s *Store) heartbeatLoop() {
	l := &s.lease
	defer close(l.done)
	t := time.NewTicker(leaseHeartbeat)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			s.heartbeat()
		}
	}
}

func (s *Store) heartbeat() {
	l := &s.lease
	l.mu.Lock()
	n := len(l.held)
	l.mu.Unlock()
	if n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaseHeartbeat)
	defer cancel()
	_ = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE leases SET heartbeat = ? WHERE holder = ?`, s.now().UnixNano(), l.holder)
		return err
	})
}

func (s *Store) stopHeartbeat() {
	close(s.lease.stop)
	<-s.lease.done
}
