//go:build unix

package tui

import (
	"os"
	"syscall"
)

// openNoWait opens a file for reading without waiting for a writer: a
// FIFO in the place of an image file named in a prompt would otherwise
// hold the UI in open(2).
func openNoWait(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
