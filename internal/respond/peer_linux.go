package respond

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

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

// descendsFrom reports whether ancestor is a strict ancestor of pid. The
// walk stops at the first process that started before ancestor did: a
// process's ancestors are all older than it, so nothing above an older
// process can be below ancestor. For an editor's relay that is usually
// the editor itself, two reads instead of a walk to init.
func descendsFrom(pid, ancestor int) (bool, error) {
	since, _, err := procStat(ancestor)
	if err != nil {
		return false, err
	}
	for range 1 << 16 { // a chain longer than any pid_max allows is a loop
		started, ppid, err := procStat(pid)
		if err != nil {
			return false, err
		}
		if started < since {
			return false, nil
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

// procStat reads the start time (in clock ticks since boot) and the parent
// of pid from /proc/PID/stat ("pid (comm) S ppid … starttime …", the
// twenty-second field; comm may hold spaces and parentheses, so the fields
// are counted after the last ')'). It reads into a buffer on the stack: the
// daemon runs it for every connection on its socket (internal/serve).
func procStat(pid int) (started uint64, ppid int, err error) {
	var path [32]byte
	name := strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10)
	name = append(name, "/stat"...)
	fd, err := unix.Open(string(name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	var buf [1024]byte
	n, err := readFull(fd, buf[:])
	unix.Close(fd)
	if err != nil {
		return 0, 0, err
	}
	started, ppid, ok := parseStat(buf[:n], n == len(buf))
	if !ok {
		return 0, 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	return started, ppid, nil
}

// parseStat finds the parent (the fourth field) and the start time (the
// twenty-second) in the text of a /proc/PID/stat; truncated says it filled
// the buffer and may lack its end.
func parseStat(b []byte, truncated bool) (started uint64, ppid int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || truncated {
		return 0, 0, false
	}
	// After ')': state(0) ppid(1) … starttime(19).
	var ppidField, startField []byte
	k := 0
	for j := i + 1; j < len(b) && k <= 19; {
		for j < len(b) && (b[j] == ' ' || b[j] == '\n') {
			j++
		}
		start := j
		for j < len(b) && b[j] != ' ' && b[j] != '\n' {
			j++
		}
		if start == j {
			break
		}
		switch k {
		case 1:
			ppidField = b[start:j]
		case 19:
			startField = b[start:j]
		}
		k++
	}
	p, err1 := strconv.Atoi(string(ppidField))
	s, err2 := strconv.ParseUint(string(startField), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return s, p, true
}

// readFull reads fd until buf is full or the file ends.
func readFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}
