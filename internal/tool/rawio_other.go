//go:build unix && !linux

package tool

import "syscall"

// The grep tool's file reads (see rawio_linux.go).

func rawOpen(path string, flags int) (int, error) {
	return syscall.Open(path, flags|syscall.O_CLOEXEC, 0)
}

// rawOpenat is never called here: entries carry no directory descriptor
// (see entryDirFD).
func rawOpenat(dirfd int, path string, flags int) (int, error) { return -1, syscall.ENOSYS }

func rawRead(fd int, b []byte) (int, error) { return syscall.Read(fd, b) }

func rawFstat(fd int, st *syscall.Stat_t) error { return syscall.Fstat(fd, st) }

func rawClose(fd int) { syscall.Close(fd) }
