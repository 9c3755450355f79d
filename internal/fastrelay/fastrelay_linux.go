package fastrelay

import (
	"syscall"
	"unsafe"
)

func init() {
	args, ok := cmdline()
	if !ok || len(args) < 1 {
		return
	}
	sock, ok := target(args[1:], func(k string) string { v, _ := syscall.Getenv(k); return v })
	if !ok || !blocking(0) || !blocking(1) {
		return
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		syscall.Close(fd)
		return // relay.go says why, or starts the daemon (auto)
	}
	// The editor's initialize is answered here from the daemon's published
	// answers when it can be (answer.go); otherwise the editor's first
	// request and the daemon's first answer pass on this thread, and the
	// second, which waits on stdin, starts after them.
	stdinEnded, answered, err := answerInitialize(fd, sock+answersSuffix)
	if err != nil {
		fail(err)
	}
	if !answered {
		ended, err := firstAnswer(fd)
		if err != nil {
			fail(err)
		}
		stdinEnded = stdinEnded || ended
	}
	if !stdinEnded {
		go func() {
			_ = copyFD(fd, 0)
			_ = syscall.Shutdown(fd, syscall.SHUT_WR)
		}()
	}
	if err := copyFD(1, fd); err != nil {
		fail(err)
	}
	syscall.Exit(0)
}

// fail ends the relay as relay.go does when a copy fails.
func fail(err error) {
	_, _ = syscall.Write(2, []byte("corvid acp --connect: "+err.Error()+"\n"))
	syscall.Exit(1)
}

// cmdline is the process's arguments, program name first.
func cmdline() ([]string, bool) {
	fd, err := syscall.Open("/proc/self/cmdline", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var buf [4096]byte
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	if n == 0 || n == len(buf) || buf[n-1] != 0 {
		return nil, false // empty, or longer than any launch line this package relays
	}
	var args []string
	start := 0
	for i := 0; i < n; i++ {
		if buf[i] == 0 {
			args = append(args, string(buf[start:i]))
			start = i + 1
		}
	}
	return args, true
}

// blocking reports whether fd is open in blocking mode: this package reads
// and writes with plain system calls, without the runtime's poller.
func blocking(fd int) bool {
	flags, err := fcntl(fd, syscall.F_GETFL)
	return err == nil && flags&syscall.O_NONBLOCK == 0
}

func fcntl(fd, cmd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// copyFD copies from src to dst until src ends (nil) or a read or write
// fails.
func copyFD(dst, src int) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := syscall.Read(src, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if err := writeAll(dst, buf[:n]); err != nil {
			return err
		}
	}
}

// firstAnswer copies both ways on this one thread, waiting in select(2),
// until the daemon has sent its first bytes, and writes at most 4 KiB of
// them: a write that fits an empty pipe never blocks. Until the daemon has
// sent something it waits on nothing of ours, so the blocking writes to
// it cannot deadlock. It reports whether stdin ended (the socket is then
// half-closed). A socket numbered past select's limit skips it.
func firstAnswer(sock int) (stdinEnded bool, err error) {
	var set syscall.FdSet
	fdBits := 8 * int(unsafe.Sizeof(set.Bits[0]))
	if sock >= fdBits*len(set.Bits) {
		return false, nil
	}
	buf := make([]byte, 64<<10)
	for {
		var rfds syscall.FdSet
		if !stdinEnded {
			rfds.Bits[0] |= 1
		}
		rfds.Bits[sock/fdBits] |= 1 << (sock % fdBits)
		if _, err := syscall.Select(sock+1, &rfds, nil, nil, nil); err != nil {
			if err == syscall.EINTR {
				continue
			}
			return stdinEnded, err
		}
		if rfds.Bits[sock/fdBits]&(1<<(sock%fdBits)) != 0 {
			n, err := syscall.Read(sock, buf[:4<<10])
			switch {
			case err == syscall.EINTR:
				continue
			case err != nil:
				return stdinEnded, err
			case n == 0:
				return stdinEnded, nil // the daemon closed: copyFD sees it too
			}
			return stdinEnded, writeAll(1, buf[:n])
		}
		if !stdinEnded && rfds.Bits[0]&1 != 0 {
			n, err := syscall.Read(0, buf)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || n == 0 {
				stdinEnded = true
				_ = syscall.Shutdown(sock, syscall.SHUT_WR)
				continue
			}
			if err := writeAll(sock, buf[:n]); err != nil {
				return stdinEnded, err
			}
		}
	}
}

// writeAll writes p to dst.
func writeAll(dst int, p []byte) error {
	for len(p) > 0 {
		n, err := syscall.Write(dst, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}
