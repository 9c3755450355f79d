//go:build !unix

package tool

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

const openNoBlock = 0

func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

type fileOps interface{}

type sysOps struct{}

// writeAtomic on systems without openat: a temporary file in the same
// directory, synced and renamed over the target, after re-resolving the
// path and comparing it with what the question showed.
func writeAtomic(_ fileOps, want Target, content []byte) error {
	if now := targetOf(want.Path); now.Real != want.Real || now.Exists != want.Exists {
		return fmt.Errorf("%s: %w", want.Path, ErrTargetChanged)
	}
	dir := filepath.Dir(want.Real)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(want.Real); err == nil {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(want.Real)+".corvid-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), mode); err != nil {
		return err
	}
	return os.Rename(f.Name(), want.Real)
}
