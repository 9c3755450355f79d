package respond

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// peerUID is the uid of the process at the other end of conn, from
// SO_PEERCRED (fixed by the kernel at connect/listen time).
func peerUID(conn *net.UnixConn) (int, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if credErr != nil {
		return -1, credErr
	}
	return int(cred.Uid), nil
}

// refuseDescendant says why the peer at conn may not answer when it is a
// process corvid started: a child, or anything below one, including a
// process that detached with setsid or a double fork. Those stay below
// corvid because `corvid acp` makes itself their child subreaper
// (internal/reaper); without that, a detached process is adopted by init and
// no longer looks like ours. The walk goes up from the pid the kernel fixed
// at connect (SO_PEERCRED) through /proc/PID/stat. Where the kernel has
// SO_PEERPIDFD (Linux 6.5), the peer is checked to be still alive after the
// walk, so its pid was not reused by another process meanwhile. A walk that
// cannot be finished (a process in the chain exited) refuses: fail closed.
func refuseDescendant(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var credErr error
	pidfd := -1
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if v, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD); err == nil {
			pidfd = v
		}
	}); err != nil {
		return err
	}
	if pidfd >= 0 {
		defer unix.Close(pidfd)
	}
	if credErr != nil {
		return credErr
	}
	self, pid := os.Getpid(), int(cred.Pid)
	// 0: the peer is in a pid namespace we cannot see, which no process
	// corvid starts can be (its own namespaces are all visible from ours).
	// self: corvid's own code (tests of this package answer in-process).
	if pid == 0 || pid == self {
		return nil
	}
	below, err := descendsFrom(pid, self)
	if err != nil {
		return fmt.Errorf("cannot tell whether the process asking (pid %d) was started by corvid: %w", pid, err)
	}
	if pidfd >= 0 && unix.PidfdSendSignal(pidfd, 0, nil, 0) != nil {
		return fmt.Errorf("the process asking (pid %d) exited", pid)
	}
	if below {
		return fmt.Errorf("only a person answers corvid's questions; the process asking (pid %d) was started by this corvid (pid %d), directly or through a process that detached. Answer from a terminal that corvid did not start", pid, self)
	}
	return nil
}

// descendsFrom reports whether ancestor is a strict ancestor of pid.
func descendsFrom(pid, ancestor int) (bool, error) {
	for range 1 << 16 { // a chain longer than any pid_max allows is a loop
		ppid, err := parentPID(pid)
		if err != nil {
			return false, err
		}
		if ppid == ancestor {
			return true, nil
		}
		if ppid <= 1 {
			return false, nil
		}
		pid = ppid
	}
	return false, errors.New("the parent chain does not end")
}

// parentPID reads the parent of pid from /proc/PID/stat ("pid (comm) S
// ppid …"; comm may hold spaces and parentheses, so parse after the last
// ')').
func parentPID(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	return strconv.Atoi(f[1])
}
