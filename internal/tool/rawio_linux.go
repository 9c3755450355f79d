package tool

import (
	"syscall"
	"unsafe"
)

// The grep tool's file reads: system calls made without telling the Go
// scheduler (RawSyscall). Opening, reading and closing a file in the page
// cache takes microseconds; through syscall.Syscall each one lets the
// scheduler hand the processor to another thread when the call is slow
// under load, and a search of 20,000 files spent more time on those hand-offs
// (futex and nanosleep) than on reading. A read that truly blocks (a hung
// network file system) holds one processor; the others go on.

func rawOpen(path string, flags int) (int, error) { return rawOpenat(atFDCWD, path, flags) }

// rawOpenat opens path relative to the directory open as dirfd.
func rawOpenat(dirfd int, path string, flags int) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags|syscall.O_CLOEXEC), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// atFDCWD is AT_FDCWD (-100): paths are relative to the working directory.
var atFDCWD = -0x64

func rawRead(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawFstat(fd int, st *syscall.Stat_t) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	if e != 0 {
		return e
	}
	return nil
}

func rawClose(fd int) { syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0) }

func rawGetdents(fd int, b []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
