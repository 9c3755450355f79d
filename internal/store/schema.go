package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migration is one step of the schema: statements, then (when set) a Go
// function over the rows, in the same transaction.
type migration struct {
	sql  string
	rows func(context.Context, *sql.Tx) error
}

// migrations is the schema's history, oldest first. Migration i brings the
// database from version i to version i+1. Never edit or reorder an entry
// that has shipped; append a new one.
//
// Times are stored as Unix nanoseconds (INTEGER). Event payloads are BLOBs
// the store never parses; migration 3 hands each to retype.Row, a plain
// function that every store backend calls the same way.
var migrations = []migration{
	// 1: sessions, their events, and run leases.
	{sql: `
CREATE TABLE sessions (
	pk              INTEGER PRIMARY KEY AUTOINCREMENT,
	id              TEXT NOT NULL UNIQUE,
	cwd             TEXT NOT NULL,
	additional_dirs TEXT NOT NULL DEFAULT '[]',
	title           TEXT NOT NULL DEFAULT '',
	model           TEXT NOT NULL DEFAULT '',
	mode            TEXT NOT NULL DEFAULT '',
	config          BLOB,
	parent_id       TEXT NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
);
CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, id DESC);
CREATE INDEX sessions_by_cwd_updated ON sessions (cwd, updated_at DESC, id DESC);

-- Events are keyed by the session's integer pk, not its text id: the key
-- is compared on every insert, and integers compare far faster. AUTOINCREMENT
-- keeps a deleted session's pk from ever naming another session.
CREATE TABLE events (
	session_pk INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	kind       TEXT NOT NULL,
	payload    BLOB NOT NULL,
	time       INTEGER NOT NULL,
	PRIMARY KEY (session_pk, seq)
) WITHOUT ROWID;

-- A lease is not tied to a session row: it guards the right to run turns,
-- and is removed by its holder's release.
CREATE TABLE leases (
	session_id TEXT PRIMARY KEY,
	holder     TEXT NOT NULL,
	owner      TEXT NOT NULL,
	host       TEXT NOT NULL,
	pid        INTEGER NOT NULL,
	heartbeat  INTEGER NOT NULL
);
`},
	// 2: each kind string stored once, in event_kinds; events.kind becomes
	// kind id << 2 | payload form (see rowform.go). Rows of version 1 keep
	// their payload as is (form 0).
	{sql: `
CREATE TABLE event_kinds (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);
INSERT INTO event_kinds (name) SELECT DISTINCT kind FROM events ORDER BY kind;
CREATE TABLE events_v2 (
	session_pk INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	kind       INTEGER NOT NULL,
	payload    BLOB NOT NULL,
	time       INTEGER NOT NULL,
	PRIMARY KEY (session_pk, seq)
) WITHOUT ROWID;
INSERT INTO events_v2 (session_pk, seq, kind, payload, time)
SELECT e.session_pk, e.seq, k.id << 2, e.payload, e.time
FROM events e JOIN event_kinds k ON k.name = e.kind;
DROP TABLE events;
ALTER TABLE events_v2 RENAME TO events;
`},
	// 3: typed event rows (issue #30). A row's tags are the agent's typed
	// fields, no longer a "meta" object of host _meta keys; team changes
	// and drain turns are rows of kinds of their own (retype.Row).
	{rows: retypeRows},
	// 4: nothing in the tables changes, but the agent may now store a long
	// streamed answer once: its model-context record points into the
	// answer's chunks ({"streamed":[from,to]}, internal/agent
	// contexttext.go) rather than repeating the text. A release before it
	// would read that record as an empty text and send the model less than
	// the user saw; with the version raised it refuses the database and
	// says to upgrade instead. Rows written before are read as they were.
	{},
}

// schemaVersion returns the version recorded in db (0 for a fresh file).
func schemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT version FROM schema_version WHERE id = 1`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// migrate applies the migrations db lacks, each in its own write
// transaction. The version is re-read inside the transaction, so processes
// opening the same fresh file at once apply each migration exactly once.
// Running it on an up-to-date database changes nothing.
func migrate(ctx context.Context, db *sql.DB) error {
	err := retryBusy(ctx, func() error {
		_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("create schema_version: %w", err)
	}
	for {
		done := false
		err := retryBusy(ctx, func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			v, err := schemaVersion(ctx, tx)
			if err != nil {
				return err
			}
			switch {
			case v > len(migrations):
				return fmt.Errorf("database schema version %d is newer than this corvid understands (%d); upgrade corvid", v, len(migrations))
			case v == len(migrations):
				done = true
				return nil
			}
			m := migrations[v]
			if m.sql != "" {
				if _, err := tx.ExecContext(ctx, m.sql); err != nil {
					return fmt.Errorf("migration %d: %w", v+1, err)
				}
			}
			if m.rows != nil {
				if err := m.rows(ctx, tx); err != nil {
					return fmt.Errorf("migration %d: %w", v+1, err)
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (id, version) VALUES (1, ?)
ON CONFLICT (id) DO UPDATE SET version = excluded.version`, v+1); err != nil {
				return err
			}
			return tx.Commit()
		})
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}
