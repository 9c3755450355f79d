package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
)

// ScanEventsTail is [Store.ScanEvents] from the session's last event of
// each of kinds on: it starts at the earliest of those last events (or,
// when that row is stored as a delta of the rows before it, at the row
// its chain starts from), so fn sees every event from the last one of
// each kind to the end, and possibly some before. A session with no
// event of any of kinds yields none. Each last event is found by walking
// the session's rows back from its end, without decoding them: a reader
// that wants only the end of a long log (`session/list`'s state of a
// session: its last prompt and usage reading) reads little of it.
func (s *Store) ScanEventsTail(ctx context.Context, sessionID string, kinds []string, fn func(Event) error) error {
	if kinds == nil {
		kinds = []string{}
	}
	return s.walk(ctx, sessionID, false, kinds, fn)
}

// tailStart is the seq ScanEventsTail starts from (math.MaxInt64: none).
func tailStart(ctx context.Context, tx *sql.Tx, pk int64, kinds map[int64]kindName, names []string) (int64, error) {
	from := int64(math.MaxInt64)
	for id, k := range kinds {
		if !slices.Contains(names, k.name) {
			continue
		}
		// kind is id<<formBits | form: the range holds every form of id.
		var seq int64
		err := tx.QueryRowContext(ctx, `SELECT seq FROM events WHERE session_pk = ? AND kind >= ? AND kind < ? ORDER BY seq DESC LIMIT 1`,
			pk, id<<formBits, (id+1)<<formBits).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, err
		}
		from = min(from, seq)
	}
	if from == math.MaxInt64 {
		return from, nil
	}
	// A delta row needs the payload of the row before it: start where its
	// chain starts, at the last row at or before it stored whole.
	var base int64
	err := tx.QueryRowContext(ctx, `SELECT seq FROM events WHERE session_pk = ? AND seq <= ? AND kind % ? <> ? ORDER BY seq DESC LIMIT 1`,
		pk, from, 1<<formBits, formDelta).Scan(&base)
	if errors.Is(err, sql.ErrNoRows) {
		return 1, nil
	}
	return base, err
}
