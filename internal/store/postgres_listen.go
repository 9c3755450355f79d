package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// listenOnce opens a connection of its own (not the pool's: it stays in
// LISTEN for the Store's life), listens on corvid's channels, calls up
// once it listens, and hands every notification to heard until the
// connection fails or ctx ends. This file is all of the listening that
// speaks pgx; the rest (postgres_notify.go) is the watchers'.
func (s *Store) listenOnce(ctx context.Context, up func(), heard func(channel, payload string)) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(closeCtx)
		cancel()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel+"; LISTEN "+questionChannel); err != nil {
		return err
	}
	up()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		heard(n.Channel, n.Payload)
	}
}
