//go:build !linux

package tool

import (
	"io/fs"
	"os"
)

// readDirEntries lists a directory, unsorted.
func readDirEntries(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}
