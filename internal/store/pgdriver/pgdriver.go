// Package pgdriver is the session store's PostgreSQL driver: the part of
// the PostgreSQL backend that links pgx (github.com/jackc/pgx/v5). The
// backend itself, its SQL, lease and schema, lives in internal/store,
// which links no PostgreSQL client and imports nothing of this package:
// cmd/corvid registers [Driver] with store.RegisterPostgres only when
// built with the corvid_pg tag (the corvid-pg binary), because pgx's
// package init would otherwise run, and its pages load, on every start
// of `corvid acp` (docs/store.md, ARCHITECTURE.md §6).
//
// This package imports nothing of corvid's: it hands the store
// database/sql connections over a pgx pool, each statement passed
// through the store's rewrite, and says what a PostgreSQL error means.
package pgdriver

import (
	"context"
	"database/sql/driver"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// Driver is the PostgreSQL driver store.RegisterPostgres takes.
type Driver struct{}

// Open connects to the database target (a postgres:// URL) through a
// pool of at most maxConns connections and checks that the server
// answers. The connector's connections pass every statement through
// rewrite. Its errors never quote target: a URL pgx cannot parse yields
// a message of its own (pgx's would quote the URL, password and all).
func (Driver) Open(target string, maxConns int, rewrite func(string) string) (driver.Connector, func(), error) {
	cfg, err := pgxpool.ParseConfig(target)
	if err != nil {
		return nil, nil, errors.New("not a valid PostgreSQL URL")
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "corvid"
	}
	cfg.MaxConns = int32(maxConns)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ConnConfig.ConnectTimeout+5*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return connector{stdlib.GetPoolConnector(pool), pool, rewrite}, pool.Close, nil
}

// Listen opens a connection of its own with the configuration of pool (a
// connector Open returned) and runs LISTEN on each channel; wait returns
// the next notification's channel and payload.
func (Driver) Listen(ctx context.Context, pool driver.Connector, channels ...string) (func(context.Context) (string, string, error), func(context.Context) error, error) {
	c, ok := pool.(connector)
	if !ok {
		return nil, nil, errors.New("pgdriver: Listen needs a connector of Open")
	}
	conn, err := pgx.ConnectConfig(ctx, c.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, nil, err
	}
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			_ = conn.Close(ctx)
			return nil, nil, err
		}
	}
	wait := func(ctx context.Context) (string, string, error) {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return "", "", err
		}
		return n.Channel, n.Payload, nil
	}
	return wait, conn.Close, nil
}

// Explain returns what err, from Open or a statement, means when the
// server gave a reason a person can act on, else "".
func (Driver) Explain(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return "the server refused the credentials: " + pe.Message
		case "3D000":
			return "no such database: " + pe.Message + " (create it first)"
		}
	}
	return ""
}

// connector hands out conns over pgx's database/sql connections.
type connector struct {
	inner   driver.Connector
	pool    *pgxpool.Pool
	rewrite func(string) string
}

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{dc.(*stdlib.Conn), c.rewrite}, nil
}

func (c connector) Driver() driver.Driver { return c.inner.Driver() }

// conn is pgx's database/sql connection with every statement passed
// through rewrite.
type conn struct {
	c       *stdlib.Conn
	rewrite func(string) string
}

func (p *conn) Prepare(q string) (driver.Stmt, error) { return p.c.Prepare(p.rewrite(q)) }
func (p *conn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return p.c.PrepareContext(ctx, p.rewrite(q))
}
func (p *conn) Close() error              { return p.c.Close() }
func (p *conn) Begin() (driver.Tx, error) { return p.c.Begin() } //nolint:staticcheck // driver.Conn requires it
func (p *conn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	return p.c.BeginTx(ctx, o)
}
func (p *conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return p.c.ExecContext(ctx, p.rewrite(q), args)
}
func (p *conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return p.c.QueryContext(ctx, p.rewrite(q), args)
}
func (p *conn) Ping(ctx context.Context) error             { return p.c.Ping(ctx) }
func (p *conn) CheckNamedValue(v *driver.NamedValue) error { return p.c.CheckNamedValue(v) }
func (p *conn) ResetSession(ctx context.Context) error     { return p.c.ResetSession(ctx) }
func (p *conn) IsValid() bool                              { return !p.c.Conn().IsClosed() }
