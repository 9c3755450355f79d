package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// rawConn runs the statements of group commit and of a turn's start on the
// write connection's driver connection directly, not through database/sql:
// database/sql starts a goroutine for every transaction and for every
// query in one (to watch the context), and each start and end wakes
// another thread. Through it a turn's first commit took twice as long
// (prompt → first chunk, ARCHITECTURE.md §7). Its statements are
// prepared once per driver connection. It is used only under the
// writer's commitMu.
type rawConn struct {
	dc    any // the driver connection the statements belong to
	stmts map[string]driver.Stmt
}

// withRaw runs fn with the write connection's driver connection, taken
// from database/sql for the call. The caller holds commitMu.
func (s *Store) withRaw(fn func(rc *rawConn) error) error {
	conn, err := s.writeDB.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		rc := &s.w.raw
		if rc.dc != dc {
			// A new connection (database/sql replaced a broken one): the
			// old statements went with the old one.
			rc.dc, rc.stmts = dc, map[string]driver.Stmt{}
		}
		return fn(rc)
	})
}

// inRawWriteTx is inWriteTx through the driver connection: fn runs in a
// write transaction (BEGIN IMMEDIATE, see dsn), retried while ctx lasts
// on SQLITE_BUSY. The caller holds commitMu.
func (s *Store) inRawWriteTx(ctx context.Context, fn func(rc *rawConn) error) error {
	return retryBusy(ctx, func() error {
		return s.withRaw(func(rc *rawConn) error {
			b, ok := rc.dc.(driver.ConnBeginTx)
			if !ok {
				return errors.New("sqlite driver cannot begin a transaction")
			}
			tx, err := b.BeginTx(context.Background(), driver.TxOptions{})
			if err != nil {
				return err
			}
			if err := fn(rc); err != nil {
				tx.Rollback()
				return err
			}
			return tx.Commit()
		})
	})
}

// closeRaw closes the prepared statements. The caller holds commitMu.
func (s *Store) closeRaw() {
	_ = s.withRaw(func(rc *rawConn) error {
		for _, st := range rc.stmts {
			st.Close()
		}
		rc.stmts = map[string]driver.Stmt{}
		return nil
	})
}

func (rc *rawConn) stmt(query string) (driver.Stmt, error) {
	if st, ok := rc.stmts[query]; ok {
		return st, nil
	}
	p, ok := rc.dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("sqlite driver cannot prepare a statement")
	}
	st, err := p.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, err
	}
	rc.stmts[query] = st
	return st, nil
}

// named converts args for the driver, as database/sql would for the
// types the store passes (int becomes int64).
func named(args []any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		if n, ok := a.(int); ok {
			a = int64(n)
		}
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

// exec runs query with args and returns how many rows it changed.
func (rc *rawConn) exec(query string, args ...any) (int64, error) {
	st, err := rc.stmt(query)
	if err != nil {
		return 0, err
	}
	e, ok := st.(driver.StmtExecContext)
	if !ok {
		return 0, errors.New("sqlite driver cannot execute a statement")
	}
	res, err := e.ExecContext(context.Background(), named(args))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// queryRow runs query with args and scans its first row into dest
// (*int64, *int or *string; NULL scans as zero); [sql.ErrNoRows] when it
// has none.
func (rc *rawConn) queryRow(query string, args []any, dest ...any) error {
	st, err := rc.stmt(query)
	if err != nil {
		return err
	}
	q, ok := st.(driver.StmtQueryContext)
	if !ok {
		return errors.New("sqlite driver cannot query")
	}
	rows, err := q.QueryContext(context.Background(), named(args))
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(vals); err != nil {
		if errors.Is(err, io.EOF) {
			return sql.ErrNoRows
		}
		return err
	}
	if len(vals) < len(dest) {
		return fmt.Errorf("query returned %d columns, want %d", len(vals), len(dest))
	}
	for i, d := range dest {
		if err := scanValue(vals[i], d); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

func scanValue(v driver.Value, dest any) error {
	switch d := dest.(type) {
	case *int64:
		switch x := v.(type) {
		case int64:
			*d = x
		case nil:
			*d = 0
		default:
			return fmt.Errorf("%T is not an integer", v)
		}
	case *int:
		var n int64
		if err := scanValue(v, &n); err != nil {
			return err
		}
		*d = int(n)
	case *string:
		switch x := v.(type) {
		case string:
			*d = x
		case []byte:
			*d = string(x)
		case nil:
			*d = ""
		default:
			return fmt.Errorf("%T is not text", v)
		}
	default:
		return fmt.Errorf("cannot scan into %T", dest)
	}
	return nil
}
