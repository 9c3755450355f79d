package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// The PostgreSQL backend. The Store's code is written once, against
// database/sql and the driver interfaces (raw.go); for PostgreSQL the
// connections come from a pgx pool (github.com/jackc/pgx/v5/pgxpool)
// through pgx's database/sql adapter, wrapped in pgConn, which rewrites
// the store's SQLite-flavoured statements into PostgreSQL's (see pgSQL).
// What differs in behaviour, not only in spelling, is asked of
// Store.pg in three places: the seq of a commit is read after the
// session's row lock (commitTx.session), every commit into a leased
// session checks the lease row in its transaction (the fence, see
// fence), and a lease is taken over only when it expired, never
// because its pid is gone (pids are not comparable across hosts).

// IsPostgres reports whether target names a PostgreSQL store.
func IsPostgres(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// Redact returns target fit to show: a PostgreSQL URL without its
// password (also one given as a query parameter), a path as it is.
func Redact(target string) string {
	if !IsPostgres(target) {
		return target
	}
	u, err := url.Parse(target)
	if err != nil {
		return "postgres://…" // unparseable: show nothing of it
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// pgMaxConns is the pool's size: one write connection, up to four
// readers, and room for a connection being replaced.
const pgMaxConns = 8

// openPostgres opens a store in the PostgreSQL database target names.
func openPostgres(target string, now func() time.Time) (*Store, error) {
	shown := Redact(target)
	cfg, err := pgxpool.ParseConfig(target)
	if err != nil {
		// pgx's message may quote the URL, password and all.
		return nil, fmt.Errorf("open session store %s: not a valid PostgreSQL URL", shown)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "corvid"
	}
	cfg.MaxConns = pgMaxConns
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ConnConfig.ConnectTimeout+5*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open session store %s: %s", shown, pgReason(err, target))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open session store %s: %s", shown, pgReason(err, target))
	}
	s := &Store{path: shown, now: now, pg: true, pool: pool}
	fail := func(err error) (*Store, error) {
		if s.writeDB != nil {
			s.writeDB.Close()
		}
		if s.readDB != nil {
			s.readDB.Close()
		}
		pool.Close()
		return nil, fmt.Errorf("open session store %s: %s", shown, pgReason(err, target))
	}
	conn := pgConnector{stdlib.GetPoolConnector(pool)}
	s.writeDB = sql.OpenDB(conn)
	s.writeDB.SetMaxOpenConns(1)
	s.writeDB.SetMaxIdleConns(1) // keep it: its prepared statements live on it
	if err := migratePostgres(ctx, s.writeDB); err != nil {
		return fail(err)
	}
	s.prepare(ctx)
	s.readDB = sql.OpenDB(conn)
	s.readDB.SetMaxOpenConns(4)
	s.readDB.SetMaxIdleConns(2)
	if err := s.lease.init(); err != nil {
		return fail(err)
	}
	s.w = newWriter(s)
	go s.w.run()
	go s.heartbeatLoop()
	return s, nil
}

// pgReason is err as a person should read it, with target's password
// (should a message quote it) taken out.
func pgReason(err error, target string) string {
	msg := err.Error()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			msg = "the server refused the credentials: " + pe.Message
		case "3D000":
			msg = "no such database: " + pe.Message + " (create it first)"
		}
	}
	if u, perr := url.Parse(target); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// pgRetryable reports a PostgreSQL error after which the whole
// transaction may simply run again: a serialization failure or a
// deadlock (two processes committing rows of the same sessions in
// different orders).
func pgRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// pgConnector hands out pgConns over pgx's database/sql connections.
type pgConnector struct{ inner driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{dc.(*stdlib.Conn)}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.inner.Driver() }

// pgConn is pgx's database/sql connection with every statement passed
// through pgSQL.
type pgConn struct{ c *stdlib.Conn }

func (p *pgConn) Prepare(q string) (driver.Stmt, error) { return p.c.Prepare(pgSQL(q)) }
func (p *pgConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return p.c.PrepareContext(ctx, pgSQL(q))
}
func (p *pgConn) Close() error              { return p.c.Close() }
func (p *pgConn) Begin() (driver.Tx, error) { return p.c.Begin() } //nolint:staticcheck // driver.Conn requires it
func (p *pgConn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	return p.c.BeginTx(ctx, o)
}
func (p *pgConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return p.c.ExecContext(ctx, pgSQL(q), args)
}
func (p *pgConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return p.c.QueryContext(ctx, pgSQL(q), args)
}
func (p *pgConn) Ping(ctx context.Context) error             { return p.c.Ping(ctx) }
func (p *pgConn) CheckNamedValue(v *driver.NamedValue) error { return p.c.CheckNamedValue(v) }
func (p *pgConn) ResetSession(ctx context.Context) error     { return p.c.ResetSession(ctx) }
func (p *pgConn) IsValid() bool                              { return !p.c.Conn().IsClosed() }

// pgSQLCache holds each statement's PostgreSQL form.
var pgSQLCache sync.Map

// pgSQL rewrites one of the store's statements for PostgreSQL: ?N and ?
// placeholders become $N, and the few SQLite spellings the store uses
// become PostgreSQL's. The store's statements hold no '?' in literals.
func pgSQL(q string) string {
	if v, ok := pgSQLCache.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] != '?' {
			b.WriteByte(q[i])
			continue
		}
		j := i + 1
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		if j > i+1 {
			b.WriteString("$" + q[i+1:j])
			i = j - 1
			continue
		}
		n++
		b.WriteString("$" + strconv.Itoa(n))
	}
	out := b.String()
	out = strings.ReplaceAll(out, "max(updated_at, ", "greatest(updated_at, ")
	out = strings.ReplaceAll(out, "FROM (SELECT 1) LEFT JOIN", "FROM (SELECT 1) AS one LEFT JOIN")
	pgSQLCache.Store(q, out)
	return out
}
