//go:build unix

package main

import (
	"os"
	"syscall"
)

// claimStdout duplicates fd 1 for the protocol and points fd 1 and
// os.Stdout at stderr.
func claimStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup2(2, 1); err != nil {
		return nil, err
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "protocol-stdout"), nil
}
