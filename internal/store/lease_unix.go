//go:build unix

package store

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid names a live process on this host. A
// process we may not signal (EPERM) is alive.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
