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
	// claims are the leases of AcquireTurn not yet written: the next
	// commit of the session's rows writes the lease row (see claim).
	claims map[string]*claim
	stop   chan struct{}
	done   chan struct{}
}

// claim is a lease taken by AcquireTurn from a read, to be written by the
// first commit of the session's rows after it, in that commit's
// transaction, once it has checked that the lease is still free and that
// the session's last seq is still seq (no other process ran a turn in
// between). Guarded by leaseState.mu.
type claim struct {
	owner   string
	seq     int64
	written bool  // the lease row is in the database
	lost    error // the commit found the lease taken: the session's rows are dropped until release
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
	l.claims = make(map[string]*claim)
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
	// Changed: the session's log grew in another process after
	// AcquireTurn read it (Owner, Host and PID are unknown).
	Changed bool
}

func (e *BusyError) Error() string {
	if e.Changed {
		return fmt.Sprintf("session %s changed in another corvid process while this turn started; send the prompt again", e.SessionID)
	}
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
	// queryLeaseClaim writes the lease unless another holder's lease is
	// there with a heartbeat at or after ?7: no row changes then.
	queryLeaseClaim = `INSERT INTO leases (session_id, holder, owner, host, pid, heartbeat) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, owner = excluded.owner, host = excluded.host,
	pid = excluded.pid, heartbeat = excluded.heartbeat
WHERE leases.holder = excluded.holder OR leases.heartbeat < ?7`
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
	return s.acquire(ctx, sessionID, owner)
}

// AcquireTurn is Acquire for a turn, which starts by appending rows: it
// also returns what [Store.LastSeq] would right after it, and it pays for
// no transaction of its own. It reads the lease and the last seq and fails
// at once with a [*BusyError] when another holder's live lease is there;
// otherwise this Store claims the lease, and the first commit of the
// session's rows after it writes the lease row in that commit's
// transaction, after checking again that no other holder took the lease and that the
// session's last seq is still lastSeq (nobody else appended meanwhile). A
// commit that finds otherwise drops the session's rows, and so does every
// commit after it until release; [Store.LeaseLost] then reports why. So
// two processes never both commit a turn's rows, and a turn's rows
// follow exactly the log it read at its start; the caller must append
// before it acts on the lease, and ask LeaseLost once those rows are
// committed. Until that first commit other processes do not see the lease.
func (s *Store) AcquireTurn(ctx context.Context, sessionID, owner string) (release func(), lastSeq int64, err error) {
	if err := s.flushSession(ctx, sessionID); err != nil {
		return nil, 0, fmt.Errorf("acquire session %s: %w", sessionID, err)
	}
	l := &s.lease
	if owner == "" {
		owner = "corvid"
	}
	if err := l.reserve(sessionID, owner, s.now()); err != nil {
		return nil, 0, fmt.Errorf("acquire session %s: %w", sessionID, err)
	}
	// No commit of this Store runs between the read and the claim, so the
	// claim's seq counts every row this Store committed before it, and
	// the first commit after it checks the seq against the database.
	w := s.w
	w.commitMu.Lock()
	var cur BusyError
	var holder string
	var hb int64
	err = retryBusy(ctx, func() error {
		// A plain read on the write connection: it takes no write lock.
		return s.withRaw(func(rc *rawConn) error {
			return rc.queryRow(queryTurnStart, []any{sessionID}, &lastSeq, &holder, &cur.Owner, &cur.Host, &cur.PID, &hb)
		})
	})
	if err == nil && holder != "" && holder != l.holder {
		cur.SessionID = sessionID
		cur.Heartbeat = time.Unix(0, hb)
		if !s.leaseStale(cur) {
			err = &cur
		}
	}
	if err == nil {
		l.mu.Lock()
		l.claims[sessionID] = &claim{owner: owner, seq: lastSeq}
		l.mu.Unlock()
	}
	w.commitMu.Unlock()
	if err != nil {
		l.unreserve(sessionID)
		return nil, 0, fmt.Errorf("acquire session %s: %w", sessionID, err)
	}
	var once sync.Once
	return func() { once.Do(func() { s.release(sessionID) }) }, lastSeq, nil
}

// LeaseLost returns why the lease AcquireTurn claimed for sessionID could
// not be written (a [*BusyError]), or nil: the lease is held, or its claim
// is not settled yet.
func (s *Store) LeaseLost(sessionID string) error {
	l := &s.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.claims[sessionID]; c != nil {
		return c.lost
	}
	return nil
}

// pendingClaim returns sessionID's claim when its lease row is still to be
// written (a copy, with the claim as the key to settle), or why it was
// lost; nil, nil when there is no claim or its row is written.
func (l *leaseState) pendingClaim(sessionID string) (*claim, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.claims[sessionID]
	if c == nil || c.written {
		return nil, nil
	}
	return c, c.lost
}

// settle records what a committed transaction did with claims.
func (l *leaseState) settle(results map[*claim]error) {
	if len(results) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for c, lost := range results {
		if lost != nil {
			c.lost = lost
			c.written = false // lost after it was written (the fence): pendingClaim reports it
		} else {
			c.written = true
		}
	}
}

// reserve takes sessionID's slot in this Store, so two goroutines of this
// process cannot both pass the checks that follow.
func (l *leaseState) reserve(sessionID, owner string, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.held[sessionID]; ok {
		return &BusyError{SessionID: sessionID, Owner: cur, Host: l.host, PID: l.pid, Heartbeat: now, Self: true}
	}
	l.held[sessionID] = owner
	return nil
}

func (l *leaseState) unreserve(sessionID string) {
	l.mu.Lock()
	delete(l.held, sessionID)
	delete(l.claims, sessionID)
	l.mu.Unlock()
}

// queryTurnStart reads a session's last seq and its lease holder, if any
// ("" for none), in one statement.
const queryTurnStart = `SELECT coalesce((SELECT max(e.seq) FROM sessions s JOIN events e ON e.session_pk = s.pk WHERE s.id = ?1), 0),
	coalesce(l.holder, ''), coalesce(l.owner, ''), coalesce(l.host, ''), coalesce(l.pid, 0), coalesce(l.heartbeat, 0)
FROM (SELECT 1) LEFT JOIN leases l ON l.session_id = ?1`

// claimCheck is what the commit that writes a claimed lease does in its
// transaction: it checks the lease row and the session's last seq (before
// the commit's rows), and writes the lease. A non-nil lost is why the
// claim failed; err is a database error (the transaction fails).
func (s *Store) claimCheck(rc *rawConn, sessionID string, c *claim, seq int64) (lost, err error) {
	l := &s.lease
	if s.pg {
		if _, err := rc.exec(pgLockLease, sessionID); err != nil {
			return nil, err
		}
	}
	if seq == c.seq {
		// The usual case, in one statement: the lease is free, ours, or
		// stale by its heartbeat.
		now := s.now()
		n, err := rc.exec(queryLeaseClaim, sessionID, l.holder, c.owner, l.host, l.pid, now.UnixNano(), now.Add(-l.ttl).UnixNano())
		if err != nil || n == 1 {
			return nil, err
		}
	}
	// Another holder's lease with a recent heartbeat (its process may
	// still be dead), or the log changed: say which.
	var cur BusyError
	var holder string
	var hb int64
	err = rc.queryRow(queryLeaseHolder, []any{sessionID}, &holder, &cur.Owner, &cur.Host, &cur.PID, &hb)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	case holder == l.holder:
	default:
		cur.SessionID = sessionID
		cur.Heartbeat = time.Unix(0, hb)
		if !s.leaseStale(cur) {
			return &cur, nil
		}
	}
	if seq != c.seq {
		return &BusyError{SessionID: sessionID, Changed: true, Heartbeat: s.now()}, nil
	}
	_, err = rc.exec(queryLeaseUpsert, sessionID, l.holder, c.owner, l.host, l.pid, s.now().UnixNano())
	return nil, err
}

// acquire takes the lease in a transaction of its own.
func (s *Store) acquire(ctx context.Context, sessionID, owner string) (release func(), err error) {
	l := &s.lease
	if owner == "" {
		owner = "corvid"
	}
	if err := l.reserve(sessionID, owner, s.now()); err != nil {
		return nil, err
	}

	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var cur BusyError
		var holder string
		var hb int64
		if s.pg {
			if _, err := tx.ExecContext(ctx, pgLockLease, sessionID); err != nil {
				return err
			}
		}
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
		_, err = upsert.ExecContext(ctx, sessionID, l.holder, owner, l.host, l.pid, s.now().UnixNano())
		return err
	})
	if err != nil {
		l.unreserve(sessionID)
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
	// On PostgreSQL the holder may be on any host, and hosts may share a
	// name (containers): only the expiry counts.
	return !s.pg && cur.Host == s.lease.host && !processAlive(cur.PID)
}

func (s *Store) release(sessionID string) {
	l := &s.lease
	// Drop the claim first, with no commit running: a commit after this
	// writes no lease row, and one before has written it, for the delete
	// below to remove.
	s.w.commitMu.Lock()
	l.mu.Lock()
	delete(l.claims, sessionID)
	l.mu.Unlock()
	s.w.commitMu.Unlock()
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
	l.unreserve(sessionID)
}

func (s *Store) releaseAll() {
	l := &s.lease
	l.mu.Lock()
	n := len(l.held)
	l.held = make(map[string]string)
	l.claims = make(map[string]*claim)
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
		if _, err := tx.ExecContext(ctx, `UPDATE leases SET heartbeat = ? WHERE holder = ?`, s.now().UnixNano(), l.holder); err != nil {
			return err
		}
		return s.checkLeasedDeleted(ctx, tx)
	})
}

func (s *Store) stopHeartbeat() {
	close(s.lease.stop)
	<-s.lease.done
}
