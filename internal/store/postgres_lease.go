package store

import (
	"database/sql"
	"errors"
	"time"
)

// PostgreSQL's statements of a commit (through pgSQL).
const (
	// pgQueryTouch takes the session's row lock; the seq is read after
	// it by a statement of its own, whose snapshot (READ COMMITTED) then
	// holds every row of a transaction that held the lock before.
	pgQueryTouch   = `UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ? RETURNING pk`
	pgQueryLastSeq = `SELECT coalesce(max(seq), 0) FROM events WHERE session_pk = ?`
	// pgQueryFence reads the lease row and keeps it (FOR SHARE) until the
	// commit ends: a takeover's write waits for the commit, and a commit
	// after a takeover sees the new holder.
	pgQueryFence = `SELECT holder, owner, host, pid, heartbeat FROM leases WHERE session_id = ? FOR SHARE`
)

// pgTouch is queryTouchSession for PostgreSQL: it bumps the session's
// updated_at and returns its pk and last seq ([sql.ErrNoRows] when the
// session is gone).
func (t *commitTx) pgTouch(sid string, at int64) (pk, seq int64, err error) {
	if err := t.rc.queryRow(pgQueryTouch, []any{at, sid}, &pk); err != nil {
		return 0, 0, err
	}
	err = t.rc.queryRow(pgQueryLastSeq, []any{pk}, &seq)
	return pk, seq, err
}

// fence checks, in the commit's transaction, that the turn lease this
// Store wrote for sid is still its own: a daemon that lost its lease (it
// expired while the daemon was paused, and another daemon took it) must
// not commit into the session. It returns why the lease is lost, or nil
// (also when this Store holds no written lease of sid: rows appended
// outside a turn are not fenced, as on SQLite). A lost lease drops the
// session's rows until release, as a lost claim does.
func (t *commitTx) fence(sid string) (lost, err error) {
	l := &t.w.s.lease
	l.mu.Lock()
	c := l.claims[sid]
	l.mu.Unlock()
	if c == nil || !c.written {
		return nil, nil
	}
	var cur BusyError
	var holder string
	var hb int64
	err = t.rc.queryRow(pgQueryFence, []any{sid}, &holder, &cur.Owner, &cur.Host, &cur.PID, &hb)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		lost = &BusyError{SessionID: sid, Changed: true, Heartbeat: time.Now()}
	case err != nil:
		return nil, err
	case holder == l.holder:
		return nil, nil
	default:
		cur.SessionID = sid
		cur.Heartbeat = time.Unix(0, hb)
		lost = &cur
	}
	if t.claims == nil {
		t.claims = map[*claim]error{}
	}
	t.claims[c] = lost
	return lost, nil
}

// forUpdate is what a read-modify-write's SELECT needs on PostgreSQL,
// where a transaction takes no lock at BEGIN (SQLite's BEGIN IMMEDIATE
// already serialises it): the row lock until the commit.
func (s *Store) forUpdate() string {
	if s.pg {
		return " FOR UPDATE"
	}
	return ""
}

// pgLockLease serialises, on PostgreSQL, the transactions that read a
// session's lease row and then write it: a row lock cannot cover a row
// that does not exist yet, a transaction-scoped advisory lock on the
// session id can.
const pgLockLease = `SELECT pg_advisory_xact_lock(hashtext('corvid-lease:' || ?))`
