//go:build unix

package respond

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// PrepareDir makes dir exist, belong to us and admit nobody else. It never
// follows a symbolic link at dir itself: in a shared temporary directory
// another user may plant one there, aimed at a directory of ours, and a
// chmod through it would lock everyone else out of the target (issue 35).
// The checks and the chmod are made on one descriptor, opened with
// O_NOFOLLOW, so what is checked is what is changed.
func PrepareDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("create control socket directory: %w", err)
	}
	if err := unix.Mkdir(dir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("create control socket directory %s: %w", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		// A link fails with ELOOP or, with O_DIRECTORY, ENOTDIR: say which.
		if fi, lerr := os.Lstat(dir); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			err = unix.ELOOP
		}
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return fmt.Errorf("control socket directory %s is a symbolic link; corvid does not follow it (remove it, or set XDG_RUNTIME_DIR or CORVID_HOME)", dir)
	case errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("control socket directory %s is not a directory", dir)
	case err != nil:
		return fmt.Errorf("control socket directory %s: %w", dir, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("control socket directory %s: %w", dir, err)
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("control socket directory %s belongs to uid %d, not to us (uid %d)", dir, st.Uid, uid)
	}
	if st.Mode&0o077 != 0 {
		if err := unix.Fchmod(fd, 0o700); err != nil {
			return fmt.Errorf("restrict control socket directory %s: %w", dir, err)
		}
	}
	return nil
}
