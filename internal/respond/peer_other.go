//go:build !linux && !darwin

package respond

import (
	"errors"
	"net"
)

// peerUID cannot tell on this platform, so every peer is refused: an
// unverified answer must not grant a permission.
func peerUID(conn *net.UnixConn) (int, error) {
	return -1, errors.New("cannot check the peer's user on this platform")
}

// refuseDescendant cannot tell here which processes corvid started: on
// this platform only the uid is checked (docs/security.md, "Who can answer
// a question").
func refuseDescendant(conn *net.UnixConn) error { return nil }
