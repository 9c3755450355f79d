package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/corvid-agent/corvid/internal/respond"
)

// listenUnix binds a socket only this user can reach: its directory is
// 0700 (created if needed), the socket 0600, and each peer is checked when
// it connects (admitUnix). A socket left by a daemon that died is replaced; one
// that still answers is another daemon, and an error.
func listenUnix(a Addr, before func(path string) error) (*Listener, error) {
	path := a.Address
	if err := respond.PrepareDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("--listen unix:%s: %w", path, err)
	}
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("--listen unix:%s: another corvid serve is listening there", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("--listen unix:%s: remove stale socket: %w", path, err)
		}
	}
	if before != nil {
		if err := before(path); err != nil {
			return nil, fmt.Errorf("--listen unix:%s: %w", path, err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("--listen unix:%s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("--listen unix:%s: restrict socket: %w", path, err)
	}
	return &Listener{Addr: a, ln: ln, URL: "unix:" + path}, nil
}

// acceptUnix runs one ACP connection per accepted socket, NDJSON both ways
// as on stdio; output goes through the conn's queue and a pump, so a
// client that stops reading never holds up the handler.
func (s *Server) acceptUnix(ctx context.Context, l *Listener) error {
	ln := l.ln.(*net.UnixListener)
	for {
		nc, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("accept on %s: %w", l.URL, err)
		}
		if !s.admitUnix(nc) { // peer.go: the same user, not the daemon's descendant
			continue
		}
		c := s.newConn(overUnix)
		c.closeTransport = func() { _ = nc.Close() }
		c.closeInput = func() { _ = nc.CloseRead() }
		s.register(c)
		mb, _ := c.acquire("")
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.pump(mb, func(msg []byte) error {
				_, err := nc.Write(append(msg, '\n'))
				return err
			})
		}()
		c.start(nc)
	}
}

// pump writes a stream's messages to the client until the conn closes or
// a write fails (which closes it).
func (c *conn) pump(mb *mailbox, write func([]byte) error) {
	for {
		msg, err := c.next(c.ctx, mb, 0)
		if err != nil {
			c.close("output ended")
			return
		}
		if err := write(msg); err != nil {
			c.close("write failed: " + err.Error())
			return
		}
	}
}
