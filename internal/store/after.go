package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// EventsAfter calls fn with each committed event of session sid whose seq
// is after `after` and, when upto > 0, at most upto, in order: what a
// reader that has shown the log through `after` has not shown yet (the
// rows another process committed since). base is the payload of event
// `after` as the reader got it (nil when it does not have it: the read
// then starts from the session's first row, since a row may be stored as
// its difference from the one before). It returns the payload of the last
// event read (base again when there was none), the next call's base. The
// Payload fn gets is fresh; Time is set. It reads one snapshot.
func (s *Store) EventsAfter(ctx context.Context, sid string, after, upto int64, base []byte, fn func(Event) error) ([]byte, error) {
	last, err := s.eventsAfter(ctx, sid, after, upto, base, false, fn)
	if errors.Is(err, errNeedBase) {
		// Rare: a reader without the base whose next row is a delta
		// (another process appended right after this one's own rows
		// only start afresh, see commitTx.session).
		last, err = s.eventsAfter(ctx, sid, after, upto, nil, true, fn)
	}
	if err != nil {
		return nil, fmt.Errorf("events of session %s after %d: %w", sid, after, err)
	}
	return last, nil
}

// errNeedBase: the first row after `after` is a delta and no base was
// given.
var errNeedBase = errors.New("the first row is a delta of a row not read")

// eventsAfter is EventsAfter reading from `after` on (whole: from the
// first row, skipping those up to `after`).
func (s *Store) eventsAfter(ctx context.Context, sid string, after, upto int64, base []byte, whole bool, fn func(Event) error) ([]byte, error) {
	from := after // rows read: seq > from
	if whole {
		from, base = 0, nil
	}
	if upto <= 0 {
		upto = 1<<63 - 1
	}
	var fnErr error
	prev := base
	err := retryBusy(ctx, func() error {
		tx, pk, kinds, err := s.beginSessionRead(ctx, sid)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		rows, err := tx.QueryContext(ctx, `SELECT seq, kind, payload, time FROM events WHERE session_pk = ? AND seq > ? AND seq <= ? ORDER BY seq`, pk, from, upto)
		if err != nil {
			return err
		}
		defer rows.Close()
		prevSeq := from
		prev = base
		for rows.Next() {
			var (
				ev      Event
				stored  []byte
				code, t int64
			)
			if err := rows.Scan(&ev.Seq, &code, &stored, &t); err != nil {
				return err
			}
			k, ok := kinds[code>>formBits]
			form := int(code & (1<<formBits - 1))
			if form == formDelta && ev.Seq == from+1 && from > 0 && prev == nil {
				return errNeedBase
			}
			if form == formDelta && (ev.Seq != prevSeq+1 || prev == nil) {
				ok = false
			}
			if ok {
				ev.Payload, err = decodeRow(make([]byte, 0, 64), form, stored, prev, k.head)
			}
			if !ok || err != nil {
				return fmt.Errorf("event %d: %w", ev.Seq, errBadRow)
			}
			ev.Kind, ev.Time = k.name, time.Unix(0, t)
			prev, prevSeq = ev.Payload, ev.Seq
			if ev.Seq <= after {
				continue
			}
			if fnErr = fn(ev); fnErr != nil {
				return nil
			}
		}
		return rows.Err()
	})
	if fnErr != nil {
		return nil, fnErr
	}
	return prev, err
}

// RunningElsewhere reports which of ids run a turn in another Store (an
// other process or machine) now: their lease row is another holder's and
// not stale. On SQLite it reports nothing (serve's _meta stays the
// daemon's own there).
func (s *Store) RunningElsewhere(ctx context.Context, ids []string) (map[string]bool, error) {
	if !s.pg || len(ids) == 0 {
		return nil, nil
	}
	stale := s.now().Add(-s.lease.ttl).UnixNano()
	rows, err := s.readDB.QueryContext(ctx, `SELECT session_id FROM leases WHERE holder <> ? AND heartbeat >= ? AND session_id = ANY(?)`,
		s.lease.holder, stale, ids)
	if err != nil {
		return nil, fmt.Errorf("read the leases: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}
