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
	// The *os.File of fd 1 stays referenced: unreachable, the garbage
	// collector would close fd 1, and the next file opened (a session
	// store connection, a file a tool reads) would take its place, there
	// for a stray write to fd 1 to corrupt.
	fd1 = os.Stdout
	os.Stdout = os.Stderr
	protocolStdout = os.NewFile(uintptr(fd), "protocol-stdout")
	return protocolStdout, nil
}

// fd1 is the *os.File of fd 1 once claimStdout pointed fd 1 at stderr.
var fd1 *os.File
