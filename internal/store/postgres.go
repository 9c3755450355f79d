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
)

// The PostgreSQL backend. The Store's code is written once, against
// database/sql and the driver interfaces (raw.go); for PostgreSQL the
// connections come from the registered [PostgresDriver] (package
// pgdriver: a pgx pool through pgx's database/sql adapter), which runs
// the store's SQLite-flavoured statements through pgSQL into
// PostgreSQL's. What differs in behaviour, not only in spelling, is asked
// of Store.pg in three places: the seq of a commit is read after the
// session's row lock (commitTx.session), every commit into a leased
// session checks the lease row in its transaction (the fence, see
// fence), and a lease is taken over only when it expired, never
// because its pid is gone (pids are not comparable across hosts).
//
// This package links no PostgreSQL client: pgx's package init and pages
// would cost every start of `corvid acp`, PostgreSQL or not, more than
// its start-up budgets allow. The binary built with the corvid_pg tag
// (corvid-pg) registers the driver; the default one hands a command
// whose store is PostgreSQL to corvid-pg (cmd/corvid, docs/store.md).

// PostgresDriver connects the store to PostgreSQL; package pgdriver's
// Driver is the one there is. What the backend needs of pgx beyond
// database/sql is a method to add here. Its methods take and return
// only the standard library's types, so that package pgdriver needs
// nothing of this one (the store's tests import it).
type PostgresDriver interface {
	// Open connects to the database target (a postgres:// URL) through a
	// pool of at most maxConns connections, checks the server answers,
	// and returns a connector whose connections pass every statement
	// through rewrite, and the pool's close.
	Open(target string, maxConns int, rewrite func(string) string) (driver.Connector, func(), error)
	// Listen opens a connection of its own to the database of pool (a
	// connector Open returned; not one of the pool's connections: it
	// stays listening), runs LISTEN on each channel, and returns a wait
	// for the next notification (its channel and payload) and the
	// connection's close.
	Listen(ctx context.Context, pool driver.Connector, channels ...string) (wait func(context.Context) (channel, payload string, err error), close func(context.Context) error, err error)
	// Explain returns what a PostgreSQL error means to a person, or "".
	Explain(err error) string
}

var pgDriver PostgresDriver

// RegisterPostgres makes d the driver of every PostgreSQL store opened
// after it. Call it before the first Open (from an init function).
func RegisterPostgres(d PostgresDriver) { pgDriver = d }

// HasPostgres reports whether a PostgreSQL driver is registered.
func HasPostgres() bool { return pgDriver != nil }

// ErrNoPostgres is the error of opening a PostgreSQL store in a program
// that registered no [PostgresDriver].
var ErrNoPostgres = errors.New("this program was built without PostgreSQL support (the corvid-pg binary has it)")

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

// pgSetupTimeout bounds the schema migration and statement preparation
// of opening a store (connecting has the driver's own timeout).
const pgSetupTimeout = 30 * time.Second

// openPostgres opens a store in the PostgreSQL database target names.
func openPostgres(target string, now func() time.Time) (*Store, error) {
	shown := Redact(target)
	if pgDriver == nil {
		return nil, fmt.Errorf("open session store %s: %w", shown, ErrNoPostgres)
	}
	conn, closePool, err := pgDriver.Open(target, pgMaxConns, pgSQL)
	if err != nil {
		return nil, fmt.Errorf("open session store %s: %s", shown, pgReason(err, target))
	}
	ctx, cancel := context.WithTimeout(context.Background(), pgSetupTimeout)
	defer cancel()
	s := &Store{path: shown, now: now, pg: true, closePool: closePool, pgPool: conn}
	fail := func(err error) (*Store, error) {
		if s.writeDB != nil {
			s.writeDB.Close()
		}
		if s.readDB != nil {
			s.readDB.Close()
		}
		closePool()
		return nil, fmt.Errorf("open session store %s: %s", shown, pgReason(err, target))
	}
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

// pgListen opens a connection that LISTENs on channels
// (PostgresDriver.Listen) to s's database.
func (s *Store) pgListen(ctx context.Context, channels ...string) (wait func(context.Context) (string, string, error), close func(context.Context) error, err error) {
	if !s.pg || pgDriver == nil {
		return nil, nil, ErrNoPostgres
	}
	return pgDriver.Listen(ctx, s.pgPool, channels...)
}

// pgReason is err as a person should read it, with target's password
// (should a message quote it) taken out.
func pgReason(err error, target string) string {
	msg := err.Error()
	if pgDriver != nil {
		if m := pgDriver.Explain(err); m != "" {
			msg = m
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
// different orders). PostgreSQL's errors (pgx's *pgconn.PgError) tell
// their code by SQLState.
func pgRetryable(err error) bool {
	var pe interface{ SQLState() string }
	if !errors.As(err, &pe) {
		return false
	}
	c := pe.SQLState()
	return c == "40001" || c == "40P01"
}

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
