// Package store keeps corvid's sessions on disk, in one SQLite database
// (modernc.org/sqlite, pure Go) shared by every corvid process of a user,
// or in a PostgreSQL database shared by several machines (postgres.go:
// the same Store and code, a fenced lease; the pgx driver is package
// pgdriver, registered by the corvid-pg binary only; docs/store.md).
//
// Start with [Open] and [Store.Append]. A session is a row of metadata
// ([Session]) plus an ordered log of opaque events (a kind string and a
// payload the store never parses). The store knows nothing of ACP or of the
// agent's event types; it only stores bytes compactly (each kind string once,
// a payload as its difference from the previous one; see rowform.go) and
// gives them back exactly. [Store.EachEvent] reads a log without holding it.
//
// Invariants this package keeps:
//
//   - Events reach the database as they happen. [Store.Append] only queues; a
//     writer goroutine commits the queue in groups (at most a few ms after
//     the first event of a group, or at once when a group is large), so a
//     kill -9 loses at most the last few ms and streaming never waits on the
//     disk per event. [Store.Flush] waits for everything queued so far;
//     [Store.CommitNow] lets its caller commit the queue itself when no
//     commit runs, one commit at a time in queue order whichever goroutine
//     runs it.
//   - All writes of one Store go through one connection, so the group commit
//     and the synchronous writes (create, update, delete, fork, leases) are
//     serialised in this process; reads use a small pool of their own.
//   - Several processes may open the same file: WAL journal, a busy timeout,
//     write transactions that take the write lock up front (BEGIN IMMEDIATE),
//     and a retry when SQLite still reports SQLITE_BUSY. Event sequence
//     numbers are assigned inside the write transaction, so two processes
//     appending to one session still produce 1, 2, 3, ...
//   - A session runs turns in one process at a time: [Store.Acquire] takes a
//     lease row that the holder refreshes; a lease whose heartbeat is old, or
//     whose process is dead on this host, may be taken over. A turn's lease
//     ([Store.AcquireTurn]) costs no transaction of its own: it is claimed
//     from a read and written by the turn's first commit, which drops the
//     turn's rows if another process took the lease or appended to the
//     session in between, so two turns never both store rows.
//
// Durability: the database runs with synchronous=NORMAL in WAL mode. A
// committed group survives the death of the process (kill -9); a power cut
// may lose the last commits before the next checkpoint but never corrupts
// the file.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
)

// Errors callers test with errors.Is.
var (
	ErrNotFound  = errors.New("session not found")
	ErrExists    = errors.New("session already exists")
	ErrBadCursor = errors.New("invalid list cursor")
	ErrBusy      = errors.New("session is in use by another corvid process")
	ErrClosed    = errors.New("session store is closed")
	ErrCorrupt   = errors.New("session store file is not a valid SQLite database")
)

const (
	busyTimeout = 5 * time.Second // SQLite waits this long for a lock before SQLITE_BUSY
	busyRetry   = time.Minute     // then we retry with backoff for this long in total
)

// Store is an open session database. It is safe for concurrent use.
type Store struct {
	path      string           // the file's absolute path, or the PostgreSQL URL without its password
	pg        bool             // a PostgreSQL store (postgres.go)
	closePool func()           // a PostgreSQL store's: ends its connection pool
	pgPool    driver.Connector // a PostgreSQL store's pool (PostgresDriver.Listen)
	writeDB   *sql.DB          // exactly one connection: every write of this process
	readDB    *sql.DB          // a small pool for reads

	now func() time.Time // injected clock (tests)

	// stmts are hotQueries, prepared once on the write connection (see
	// txStmt).
	stmts map[string]*sql.Stmt

	w     *writer      // group commit of appended events
	holds holds        // log tails writers keep to merge into (hold.go)
	ckpt  checkpointer // SQLite: checkpoints beside the commits (checkpoint.go)

	lease   leaseState
	deleted deletedSessions // sessions found deleted under this Store (deleted.go)
	failed  failedRows      // sessions whose rows failed to commit (failed.go)
	watch   watchers        // PostgreSQL: sessions watched for other Stores' commits (postgres_notify.go)
	own     ownSeqs         // PostgreSQL: the last seq this Store wrote of each session (own.go)

	closeOnce sync.Once
	closeErr  error
}

// Open opens the session store target names and brings its schema up to
// date. target is a SQLite file's path (or "sqlite:" and the path), which
// is created (and its parent directory, mode 0700) when missing, or a
// postgres:// (postgresql://) URL of a PostgreSQL database, which must
// exist (see postgres.go). A file that is not a SQLite database yields an
// error naming the file that wraps [ErrCorrupt]; a server that cannot be
// reached or refuses the credentials, an error naming the URL without its
// password.
func Open(target string) (*Store, error) {
	if IsPostgres(target) {
		return openPostgres(target, time.Now)
	}
	return open(strings.TrimPrefix(target, "sqlite:"), time.Now)
}

func open(path string, now func() time.Time) (*Store, error) {
	if path == "" {
		return nil, errors.New("open session store: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open session store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open session store %s: %w", abs, err)
	}
	// Create the file ourselves so that it (and the -wal and -shm files,
	// which SQLite gives the database file's mode) is private to the user.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open session store %s: %w", abs, err)
	}
	f.Close()

	s := &Store{path: abs, now: now}
	fail := func(err error) (*Store, error) {
		if s.writeDB != nil {
			s.writeDB.Close()
		}
		if s.readDB != nil {
			s.readDB.Close()
		}
		if isCorrupt(err) {
			return nil, fmt.Errorf("open session store %s: %w (%v); move the file aside to start with an empty store", abs, ErrCorrupt, err)
		}
		return nil, fmt.Errorf("open session store %s: %w", abs, err)
	}

	s.writeDB, err = sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		return fail(err)
	}
	s.writeDB.SetMaxOpenConns(1)
	s.writeDB.SetMaxIdleConns(1)
	s.writeDB.SetConnMaxLifetime(0)
	s.writeDB.SetConnMaxIdleTime(0)

	ctx := context.Background()
	// Opening a fresh file while another process converts it to WAL can
	// fail with SQLITE_BUSY without waiting on the busy timeout; retry.
	if err := retryBusy(ctx, func() error { return s.writeDB.PingContext(ctx) }); err != nil {
		return fail(err)
	}
	if err := migrate(ctx, s.writeDB); err != nil {
		return fail(err)
	}
	s.prepare(ctx)

	s.readDB, err = sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		return fail(err)
	}
	s.readDB.SetMaxOpenConns(4)
	s.readDB.SetMaxIdleConns(2)
	if err := retryBusy(ctx, func() error { return s.readDB.PingContext(ctx) }); err != nil {
		return fail(err)
	}

	if err := s.lease.init(); err != nil {
		return fail(err)
	}
	s.ckpt.init(s.readDB)
	s.w = newWriter(s)
	go s.w.run()
	go s.heartbeatLoop()
	return s, nil
}

// Path returns the absolute path of the database file, or for PostgreSQL
// the store's URL without its password.
func (s *Store) Path() string { return s.path }

// Close commits every queued event, releases the leases this Store holds and
// closes the database. It returns the first write error not yet reported by
// [Store.Flush]. Close is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.holds.release("")
		err := s.w.close()
		s.ckpt.close()
		s.stopWatch()
		s.stopHeartbeat()
		s.releaseAll()
		for _, st := range s.stmts {
			st.Close()
		}
		s.w.commitMu.Lock()
		s.closeRaw()
		s.w.commitMu.Unlock()
		err = errors.Join(err, s.readDB.Close(), s.writeDB.Close())
		if s.closePool != nil {
			s.closePool()
		}
		s.closeErr = err
	})
	return s.closeErr
}

// dsn builds the modernc.org/sqlite data source name. The path is a file:
// URI so that '?', '#' and '%' in directory names cannot be mistaken for URI
// syntax; SQLite ignores the driver's underscore parameters.
func dsn(path string, write bool) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if write {
		q.Add("_pragma", "journal_mode(WAL)")
		// Checkpoints run beside the commits (checkpoint.go).
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstop))
		// Every transaction on the write connection writes: take the write
		// lock at BEGIN, where the busy handler applies, instead of
		// upgrading later, where SQLite may fail at once with SQLITE_BUSY.
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	return u.String() + "?" + q.Encode()
}

// sqliteCode returns the primary SQLite result code in err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

const (
	codeBusy    = 5
	codeLocked  = 6
	codeCorrupt = 11
	codeNotADB  = 26
)

func isBusy(err error) bool {
	c := sqliteCode(err)
	return c == codeBusy || c == codeLocked || pgRetryable(err)
}

func isCorrupt(err error) bool {
	c := sqliteCode(err)
	return c == codeCorrupt || c == codeNotADB
}

// retryBusy runs fn until it succeeds, fails with something other than
// SQLITE_BUSY/LOCKED, ctx ends, or busyRetry has passed. SQLite's own busy
// timeout already waited inside each attempt; this covers the cases it does
// not (a snapshot that went stale, a lock held longer than the timeout).
func retryBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(busyRetry)
	backoff := time.Millisecond
	for {
		err := fn()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		backoff = min(backoff*2, 100*time.Millisecond)
	}
}

// inWriteTx runs fn in a write transaction on the write connection, retrying
// the whole transaction on SQLITE_BUSY.
func (s *Store) inWriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return retryBusy(ctx, func() error {
		tx, err := s.writeDB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// hotQueries run through database/sql on every turn (a turn's end
// releases its lease). SQLite parses a query each time database/sql runs
// it on a transaction; prepared once, they are parsed once. Group commit
// and a turn's start prepare theirs on the driver connection (raw.go);
// the lease queries of Store.Acquire run once per `corvid sessions rm`.
var hotQueries = []string{queryLeaseDelete}

// prepare prepares hotQueries on the write connection. A query that fails
// to prepare is left to txStmt to prepare in its transaction.
func (s *Store) prepare(ctx context.Context) {
	s.stmts = make(map[string]*sql.Stmt, len(hotQueries))
	for _, q := range hotQueries {
		if st, err := s.writeDB.PrepareContext(ctx, q); err == nil {
			s.stmts[q] = st
		}
	}
}

// txStmt returns query as a statement of tx, the write connection's
// transaction: the statement prepared when the Store opened, or one
// prepared now. database/sql closes it with tx.
func (s *Store) txStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st := s.stmts[query]; st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
