package respond

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID is the uid of the process at the other end of conn, from
// LOCAL_PEERCRED.
func peerUID(conn *net.UnixConn) (int, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Xucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if credErr != nil {
		return -1, credErr
	}
	return int(cred.Uid), nil
}

// refuseDescendant cannot tell here which processes corvid started: on
// this platform only the uid is checked (docs/security.md, "Who can answer
// a question").
func refuseDescendant(conn *net.UnixConn) error { return nil }
