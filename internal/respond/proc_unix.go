//go:build unix

package respond

import (
	"errors"
	"io/fs"
	"syscall"
)

// processAlive reports whether pid runs on this host; one we may not
// signal (EPERM) runs.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// fileOwner is the uid owning fi.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
