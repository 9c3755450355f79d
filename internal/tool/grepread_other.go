//go:build !unix

package tool

import (
	"io"
	"os"
)

// read loads a whole file through os.File where there are no Unix system
// calls; like the Unix variant it reads only regular files up to maxGrepFile.
// It does not skim: the whole file is searched.
func (buf *grepBuffer) read(path string, _ dirRef, _ *skimmer) ([]byte, string) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, skipUnreadable
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, skipUnreadable
	case !st.Mode().IsRegular():
		return nil, skipNotRegular
	case st.Size() > maxGrepFile:
		return nil, skipTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, maxGrepFile+1))
	if err != nil {
		return nil, skipUnreadable
	}
	if len(data) > maxGrepFile {
		return nil, skipTooLarge
	}
	buf.b = data
	return data, skipNone
}
