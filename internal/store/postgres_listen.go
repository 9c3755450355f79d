package store

import (
	"context"
	"time"
)

// listenOnce opens a connection of its own (not the pool's: it stays in
// LISTEN for the Store's life, PostgresDriver.Listen), listens on
// corvid's channels, calls up once it listens, and hands every
// notification to heard until the connection fails or ctx ends. The
// rest of the listening (postgres_notify.go) is the watchers'.
func (s *Store) listenOnce(ctx context.Context, up func(), heard func(channel, payload string)) error {
	wait, closeConn, err := s.pgListen(ctx, notifyChannel, questionChannel)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = closeConn(closeCtx)
		cancel()
	}()
	up()
	for {
		channel, payload, err := wait(ctx)
		if err != nil {
			return err
		}
		heard(channel, payload)
	}
}
