//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// execTUI replaces this process with corvid-tui, which then owns the
// terminal, its signals and the exit status.
func execTUI(path string, args []string) error {
	if err := syscall.Exec(path, append([]string{path}, args...), os.Environ()); err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	return nil
}

// handOff replaces this process with the program path, run with args and
// env; fd 1 is first given back the stdout that claimStdout kept for the
// protocol, so the program finds the stdio corvid was started with.
func handOff(path string, args, env []string) error {
	if protocolStdout != nil {
		if err := unix.Dup2(int(protocolStdout.Fd()), 1); err != nil {
			return fmt.Errorf("run %s: give back stdout: %w", path, err)
		}
	}
	if err := syscall.Exec(path, append([]string{path}, args...), env); err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	return nil
}
