package serve

// Who may connect: a person's clients, never a process the daemon started.
// A command the user allowed once (or anything it left behind, detached
// with setsid or a double fork: internal/reaper keeps those below the
// daemon) must not connect, load a live session and answer its next
// permission question (issue 35, docs/security.md "Who can answer a
// question"). Each accepted connection is checked here, before any byte of
// it is read: on the unix socket by the kernel's SO_PEERCRED (the control
// socket's check, respond.RefuseDescendant), on a loopback TCP listener by
// finding which process holds the other end (peer_linux.go).

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/corvid-agent/corvid/internal/respond"
)

// admitUnix says whether the peer of a unix socket connection may speak
// ACP with the daemon: the same user, and not the daemon's descendant. A
// refused peer gets one JSON-RPC error line saying why, and is closed.
func (s *Server) admitUnix(nc *net.UnixConn) bool {
	uid, err := respond.PeerUID(nc)
	if err != nil || uid != os.Getuid() {
		s.log.Warn("unix socket: refused a peer of another user", "peer_uid", uid, "err", err)
		nc.Close()
		return false
	}
	if err := respond.RefuseDescendant(nc); err != nil {
		s.log.Warn("unix socket: refused a peer", "err", err)
		refuseLine(nc, err)
		nc.Close()
		return false
	}
	return true
}

// refuseLine writes the JSON-RPC error a refused unix peer reads.
func refuseLine(nc net.Conn, why error) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32000, "message": "permission denied: " + why.Error()}})
	_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = nc.Write(append(b, '\n'))
}

// guardedListener is a TCP listener whose Accept closes every connection
// whose peer descends from the daemon, so the HTTP server (/acp, the
// WebSocket, the dashboard) never reads a request from it.
type guardedListener struct {
	net.Listener
	log *slog.Logger
}

func (g guardedListener) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if err := refuseTCPDescendant(c); err != nil {
			g.log.Warn("refused a connection", "remote", c.RemoteAddr().String(), "err", err)
			c.Close()
			continue
		}
		return c, nil
	}
}

// errDescendant is the refusal of a peer the daemon started.
func errDescendant(pid int) error {
	return fmt.Errorf("only a person answers corvid's questions; the process connecting (pid %d) was started by this daemon (pid %d), directly or through a process that detached. Connect from a terminal that corvid did not start", pid, os.Getpid())
}
