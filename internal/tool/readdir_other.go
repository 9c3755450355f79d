//go:build !linux

package tool

import (
	"io/fs"
	"os"
)

// readDirEntries lists a directory, unsorted. It keeps no descriptor
// open (dirfd -1): entries are opened by path.
func readDirEntries(dir string) (entries []fs.DirEntry, dirfd int, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, -1, err
	}
	defer f.Close()
	entries, err = f.ReadDir(-1)
	return entries, -1, err
}

func closeDirFD(int) {}

func entryDirRef(fs.DirEntry) dirRef { return noDirRef }
