//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// execTUI replaces this process with corvid-tui, which then owns the
// terminal, its signals and the exit status.
func execTUI(path string, args []string) error {
	if err := syscall.Exec(path, append([]string{path}, args...), os.Environ()); err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	return nil
}
