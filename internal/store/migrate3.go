package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/corvid-agent/corvid/internal/store/retype"
)

// retypeRows is migration 3's work (issue #30): every event row goes
// through retype.Row, which turns the host _meta keys earlier releases
// stored into the agent's typed fields and gives team changes and drain
// turns kinds of their own. The store still parses no payload itself.
// Another backend runs the same migration with RetypeSessionRows (per
// session) and retype.SessionConfig (per session's settings).
//
// Sessions are read one at a time. A delta row's base is the previous
// row's payload, so once a row of a session changes, it and every row
// after it are stored again (in the smallest form against the new base);
// the rows before it stay as they are. A database without tagged rows is
// read once and not written. The sessions' stored settings lose their
// CodeBuddy-named keys the same way (retype.SessionConfig).
func retypeRows(ctx context.Context, tx *sql.Tx) error {
	kinds, err := readKinds(ctx, tx)
	if err != nil {
		return err
	}
	ids := make(map[string]int64, len(kinds))
	for id, k := range kinds {
		ids[k.name] = id
	}
	kindID := func(name string) (int64, error) {
		if id, ok := ids[name]; ok {
			return id, nil
		}
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO event_kinds (name) VALUES (?) RETURNING id`, name).Scan(&id)
		ids[name] = id
		kinds[id] = kindName{name, kindHead(name)}
		return id, err
	}
	var pks []int64
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT session_pk FROM events ORDER BY session_pk`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var pk int64
		if err := rows.Scan(&pk); err != nil {
			rows.Close()
			return err
		}
		pks = append(pks, pk)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, pk := range pks {
		if err := retypeSession(ctx, tx, pk, kinds, kindID); err != nil {
			return fmt.Errorf("session %d: %w", pk, err)
		}
	}
	return retypeConfigs(ctx, tx)
}

// retypeConfigs renames the CodeBuddy-named keys of the sessions' stored
// settings (retype.SessionConfig).
func retypeConfigs(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT pk, config FROM sessions WHERE instr(config, 'codebuddy.ai/') > 0`)
	if err != nil {
		return err
	}
	type change struct {
		pk     int64
		config []byte
	}
	var changes []change
	for rows.Next() {
		var c change
		if err := rows.Scan(&c.pk, &c.config); err != nil {
			rows.Close()
			return err
		}
		if out, ok := retype.SessionConfig(c.config); ok {
			changes = append(changes, change{c.pk, out})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range changes {
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET config = ? WHERE pk = ?`, c.config, c.pk); err != nil {
			return err
		}
	}
	return nil
}

// StoredRow is one event row of a session as a backend holds it: its seq,
// its kind's name, its form (rowform.go) and the stored bytes.
type StoredRow struct {
	Seq    int64
	Kind   string
	Form   int
	Stored []byte
}

// RetypeSessionRows is migration 3 over one session's rows, in seq order,
// as a backend holds them (SQLite here; PostgreSQL stores the same row
// form): each row's payload is decoded, passed through retype.Row, and
// from the first row that changed on, every row is encoded again against
// its new base. It returns the rows to write back (kind name, form and
// stored bytes; the caller maps a new kind name to its event_kinds id),
// and no row for a session without tagged rows.
func RetypeSessionRows(rows []StoredRow) ([]StoredRow, error) {
	type row struct {
		seq     int64
		kind    string
		payload []byte
	}
	all := make([]row, 0, len(rows))
	var prev []byte
	prevSeq := int64(-1)
	for _, r := range rows {
		if r.Form == formDelta && r.Seq != prevSeq+1 {
			return nil, fmt.Errorf("event %d: %w", r.Seq, errBadRow)
		}
		p, err := decodeRow(nil, r.Form, r.Stored, prev, kindHead(r.Kind))
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", r.Seq, err)
		}
		all = append(all, row{r.Seq, r.Kind, p})
		prev, prevSeq = p, r.Seq
	}
	first := -1
	for i := range all {
		kind, payload, changed := retype.Row(all[i].kind, all[i].payload)
		if changed {
			all[i].kind, all[i].payload = kind, payload
			if first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		return nil, nil
	}
	out := make([]StoredRow, 0, len(all)-first)
	for i := first; i < len(all); i++ {
		r := all[i]
		var base []byte
		if i > 0 && all[i-1].seq == r.seq-1 && len(all[i-1].payload) <= maxDeltaBase {
			base = all[i-1].payload
		}
		form, stored := encodeRow(nil, r.payload, base, kindHead(r.kind))
		out = append(out, StoredRow{Seq: r.seq, Kind: r.kind, Form: form, Stored: stored})
	}
	return out, nil
}

// retypeSession runs RetypeSessionRows on one session of the SQLite
// store and writes back what it returns.
func retypeSession(ctx context.Context, tx *sql.Tx, pk int64, kinds map[int64]kindName, kindID func(string) (int64, error)) error {
	rows, err := tx.QueryContext(ctx, `SELECT seq, kind, payload FROM events WHERE session_pk = ? ORDER BY seq`, pk)
	if err != nil {
		return err
	}
	var all []StoredRow
	for rows.Next() {
		var r StoredRow
		var code int64
		if err := rows.Scan(&r.Seq, &code, &r.Stored); err != nil {
			rows.Close()
			return err
		}
		k, ok := kinds[code>>formBits]
		if !ok {
			rows.Close()
			return fmt.Errorf("event %d: %w", r.Seq, errBadRow)
		}
		r.Kind, r.Form = k.name, int(code&(1<<formBits-1))
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	changed, err := RetypeSessionRows(all)
	if err != nil {
		return err
	}
	for _, r := range changed {
		id, err := kindID(r.Kind)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE events SET kind = ?, payload = ? WHERE session_pk = ? AND seq = ?`,
			id<<formBits|int64(r.Form), r.Stored, pk, r.Seq); err != nil {
			return err
		}
	}
	return nil
}
