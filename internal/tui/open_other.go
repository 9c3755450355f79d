//go:build !unix

package tui

import "os"

// openNoWait opens a file for reading (where a FIFO cannot be opened so).
func openNoWait(path string) (*os.File, error) { return os.Open(path) }
