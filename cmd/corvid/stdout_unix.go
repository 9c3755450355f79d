//go:build unix

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// claimStdout duplicates fd 1 for the protocol and points fd 1 and
// os.Stdout at stderr.
func claimStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	if err := unix.Dup2(2, 1); err != nil { // syscall has no Dup2 on linux/arm64
		return nil, err
	}
	os.Stdout = os.Stderr
	protocolStdout = os.NewFile(uintptr(fd), "protocol-stdout")
	return protocolStdout, nil
}
