package store

import (
	"context"
	"database/sql"
	"sync"
)

// deletedSessions are the sessions this Store found deleted while it
// wrote them or held their lease: another process (`corvid sessions
// delete`, session/delete) removed the row under a running turn.
type deletedSessions struct {
	mu sync.Mutex
	m  map[string]chan struct{} // closed once the session is known deleted
}

func (d *deletedSessions) ch(sessionID string) chan struct{} {
	if d.m == nil {
		d.m = make(map[string]chan struct{})
	}
	c, ok := d.m[sessionID]
	if !ok {
		c = make(chan struct{})
		d.m[sessionID] = c
	}
	return c
}

// Deleted returns a channel that is closed once this Store learns that
// sessionID was deleted: a commit of its events found no session row, or
// the lease heartbeat found the session of a lease it holds gone (within
// leaseHeartbeat). A turn running on it stops then.
func (s *Store) Deleted(sessionID string) <-chan struct{} {
	d := &s.deleted
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch(sessionID)
}

// IsDeleted reports whether [Store.Deleted]'s channel is closed.
func (s *Store) IsDeleted(sessionID string) bool {
	select {
	case <-s.Deleted(sessionID):
		return true
	default:
		return false
	}
}

func (s *Store) markDeleted(sessionID string) {
	d := &s.deleted
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.ch(sessionID)
	select {
	case <-c:
	default:
		close(c)
	}
}

// forget drops what this Store knows of sessionID's deletion (a session
// created again under the same id, in tests).
func (d *deletedSessions) forget(sessionID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.m[sessionID]; ok {
		select {
		case <-c:
			delete(d.m, sessionID)
		default:
		}
	}
}

// queryLeasedDeleted lists the sessions a holder has leases of whose
// session row is gone.
const queryLeasedDeleted = `SELECT session_id FROM leases WHERE holder = ? AND session_id NOT IN (SELECT id FROM sessions)`

// checkLeasedDeleted marks the sessions this Store holds leases of that
// were deleted meanwhile.
func (s *Store) checkLeasedDeleted(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, queryLeasedDeleted, s.lease.holder)
	if err != nil {
		return err
	}
	defer rows.Close()
	var gone []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		gone = append(gone, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range gone {
		s.markDeleted(id)
	}
	return nil
}
