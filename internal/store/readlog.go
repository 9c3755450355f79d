package store

// Reading a session's log back: its last seq, and its events one by one.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// LastSeq returns the seq of a session's last event (0 for none), after
// committing any events this Store still holds for it. Another process
// appending to the session moves it.
func (s *Store) LastSeq(ctx context.Context, sessionID string) (int64, error) {
	if err := s.flushSession(ctx, sessionID); err != nil {
		return 0, fmt.Errorf("last event of session %s: %w", sessionID, err)
	}
	var seq int64
	err := retryBusy(ctx, func() error {
		// On the write connection (a plain read takes no lock): it is
		// open anyway, so a per-turn check opens no extra file handles.
		return s.writeDB.QueryRowContext(ctx, queryLastSeq, sessionID).Scan(&seq)
	})
	if err != nil {
		return 0, fmt.Errorf("last event of session %s: %w", sessionID, err)
	}
	return seq, nil
}

// Events returns every event of a session in order, after committing any
// events this Store still holds in memory for it. An unknown session yields
// [ErrNotFound]. It holds the whole log in memory; [Store.EachEvent] does not.
func (s *Store) Events(ctx context.Context, sessionID string) ([]Event, error) {
	var out []Event
	err := s.EachEvent(ctx, sessionID, func(ev Event) error {
		out = append(out, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachEvent calls fn with every event of a session in order, after
// committing any events this Store still holds in memory for it, reading
// rows as it goes: memory stays bounded by the largest event, not the
// session. Each Event's Payload is freshly allocated; fn may keep it but
// must not modify it. An error from fn stops the walk and is returned as
// is. An unknown session yields [ErrNotFound]. The walk reads one snapshot:
// events appended meanwhile are not seen.
func (s *Store) EachEvent(ctx context.Context, sessionID string, fn func(Event) error) error {
	return s.walk(ctx, sessionID, true, nil, fn)
}

// ScanEvents is [Store.EachEvent] for a reader that decodes each event
// and keeps nothing of it: the Payload fn gets is only valid until fn
// returns (its bytes are reused for the next events), which spares an
// allocation and a copy per row. Time is not read (zero).
func (s *Store) ScanEvents(ctx context.Context, sessionID string, fn func(Event) error) error {
	return s.walk(ctx, sessionID, false, nil, fn)
}

// walk is EachEvent (fresh payloads) and ScanEvents (reused ones); with
// tail, ScanEventsTail (tail.go).
func (s *Store) walk(ctx context.Context, sessionID string, fresh bool, tail []string, fn func(Event) error) error {
	if err := s.flushSession(ctx, sessionID); err != nil {
		return fmt.Errorf("events of session %s: %w", sessionID, err)
	}
	delivered := false
	var fnErr error
	err := retryBusy(ctx, func() error {
		if delivered {
			// Never replay events fn has seen; a busy error mid-walk
			// (which WAL readers should not meet) is returned instead.
			return nil
		}
		tx, pk, kinds, err := s.beginSessionRead(ctx, sessionID)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var from int64
		if tail != nil {
			if from, err = tailStart(ctx, tx, pk, kinds, tail); err != nil {
				return err
			}
		}
		q := `SELECT seq, kind, payload, time FROM events WHERE session_pk = ? AND seq >= ? ORDER BY seq`
		if !fresh {
			q = `SELECT seq, kind, payload FROM events WHERE session_pk = ? AND seq >= ? ORDER BY seq` // each column costs
		}
		rows, err := tx.QueryContext(ctx, q, pk, from)
		if err != nil {
			return err
		}
		defer rows.Close()
		var (
			prev    []byte // the previous event's payload, the base of a delta
			spare   []byte // without fresh: the buffer the next payload is decoded into
			prevSeq int64
			stored  sql.RawBytes
			code, t int64
			seq     int64
		)
		dest := []any{&seq, &code, &stored, &t}
		if !fresh {
			dest = dest[:3]
		}
		for rows.Next() {
			var ev Event
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			ev.Seq = seq
			k, ok := kinds[code>>formBits]
			form := int(code & (1<<formBits - 1))
			if form == formDelta && ev.Seq != prevSeq+1 {
				ok = false
			}
			if ok {
				buf := spare[:0]
				if fresh {
					buf = make([]byte, 0, 64)
				}
				ev.Payload, err = decodeRow(buf, form, stored, prev, k.head)
			}
			if !ok || err != nil {
				return fmt.Errorf("event %d: %w", ev.Seq, errBadRow)
			}
			ev.Kind = k.name
			if fresh {
				ev.Time = time.Unix(0, t)
				prev = append(prev[:0], ev.Payload...)
			} else {
				// The payload is the next row's base; the old base's
				// buffer takes the next row.
				prev, spare = ev.Payload, prev
			}
			prevSeq = ev.Seq
			delivered = true
			if fnErr = fn(ev); fnErr != nil {
				return nil
			}
		}
		return rows.Err()
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("events of session %s: %w", sessionID, err)
	}
	return nil
}

type kindName struct {
	name string
	head []byte // kindHead(name)
}

// beginSessionRead opens a read transaction on one snapshot and finds the
// session's pk and the event kinds in it; the caller rolls tx back.
func (s *Store) beginSessionRead(ctx context.Context, sessionID string) (tx *sql.Tx, pk int64, kinds map[int64]kindName, err error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.pg {
		// One snapshot for the kinds and the rows, as SQLite's read
		// transaction is (READ COMMITTED, PostgreSQL's default, takes one
		// per statement: a kind committed between the two would be
		// missing).
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err = s.readDB.BeginTx(ctx, opts)
	if err != nil {
		return nil, 0, nil, err
	}
	err = tx.QueryRowContext(ctx, `SELECT pk FROM sessions WHERE id = ?`, sessionID).Scan(&pk)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err == nil {
		kinds, err = readKinds(ctx, tx)
	}
	if err != nil {
		_ = tx.Rollback()
		return nil, 0, nil, err
	}
	return tx, pk, kinds, nil
}

// readKinds loads the event_kinds table (a few dozen rows at most).
func readKinds(ctx context.Context, tx *sql.Tx) (map[int64]kindName, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, name FROM event_kinds`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[int64]kindName{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		m[id] = kindName{name, kindHead(name)}
	}
	return m, rows.Err()
}
