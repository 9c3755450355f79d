//go:build unix

package tool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// openNoBlock keeps an open of a FIFO from waiting for a writer and of a
// terminal from becoming the controlling one.
const openNoBlock = syscall.O_NONBLOCK | syscall.O_NOCTTY

func fileID(st fs.FileInfo) (dev, ino uint64) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev), uint64(s.Ino)
	}
	return 0, 0
}

// fileOps are the system calls an atomic write makes after the temporary
// file exists; tests replace them to inject a failure (a full disk) that
// running as root cannot defeat.
type fileOps interface {
	Write(fd int, b []byte) (int, error)
	Fsync(fd int) error
	Renameat(dirfd int, from, to string) error
}

type sysOps struct{}

func (sysOps) Write(fd int, b []byte) (int, error) { return unix.Write(fd, b) }
func (sysOps) Fsync(fd int) error                  { return unix.Fsync(fd) }
func (sysOps) Renameat(dirfd int, from, to string) error {
	return unix.Renameat(dirfd, from, dirfd, to)
}

var tmpSeq atomic.Uint64

// writeAtomic replaces want.Real with content: a temporary file in the same
// directory, written, fsynced and renamed over the old one, keeping its
// mode (and owner where allowed). The directory is opened one component at
// a time without following links, and the final name is checked against
// want, so a link swapped in after the question cannot redirect the write.
// On any failure the original file is untouched and the temporary removed.
func writeAtomic(ops fileOps, want Target, content []byte) error {
	dir, name := filepath.Split(want.Real)
	dirfd, err := openDirNoFollow(dir)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)

	var st unix.Stat_t
	mode := uint32(0o644)
	uid, gid := -1, -1
	switch err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		if !want.Exists || uint64(st.Dev) != want.Dev || uint64(st.Ino) != want.Ino {
			return fmt.Errorf("%s: %w", want.Path, ErrTargetChanged)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
		case unix.S_IFDIR:
			return fmt.Errorf("%s is a directory", want.Real)
		default:
			return &NotRegularError{Path: want.Real, Mode: goMode(uint32(st.Mode))}
		}
		mode = uint32(st.Mode) & 0o7777
		uid, gid = int(st.Uid), int(st.Gid)
	case errors.Is(err, unix.ENOENT):
		if want.Exists {
			return fmt.Errorf("%s: %w", want.Path, ErrTargetChanged)
		}
	default:
		return &fs.PathError{Op: "stat", Path: want.Real, Err: err}
	}

	tmp := "." + name + ".corvid-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tmpSeq.Add(1), 10) + ".tmp"
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "create", Path: filepath.Join(dir, tmp), Err: err}
	}
	fail := func(op string, err error) error {
		unix.Close(fd)
		unix.Unlinkat(dirfd, tmp, 0)
		return &fs.PathError{Op: op, Path: want.Real, Err: err}
	}
	for b := content; len(b) > 0; {
		n, err := ops.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail("write", err)
		}
		if n == 0 {
			return fail("write", unix.EIO)
		}
		b = b[n:]
	}
	if uid >= 0 {
		_ = unix.Fchown(fd, uid, gid) // best effort: only root may give a file away
	}
	if err := unix.Fchmod(fd, mode); err != nil {
		return fail("chmod", err)
	}
	if err := ops.Fsync(fd); err != nil {
		return fail("sync", err)
	}
	if err := unix.Close(fd); err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return &fs.PathError{Op: "close", Path: want.Real, Err: err}
	}
	if err := ops.Renameat(dirfd, tmp, name); err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return &fs.PathError{Op: "rename", Path: want.Real, Err: err}
	}
	// Make the rename itself survive a crash (best effort: the directory
	// may not be readable, only searchable).
	if d, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		_ = unix.Fsync(d)
		unix.Close(d)
	}
	return nil
}

// openDirNoFollow opens the absolute directory dir one component at a time
// with O_NOFOLLOW, creating missing ones (0755). dir has had its links
// resolved already; a link met now was swapped in since, and is refused.
func openDirNoFollow(dir string) (int, error) {
	fd, err := unix.Open("/", dirWalkFlag|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	walked := "/"
	for _, name := range splitPath(dir) {
		walked = filepath.Join(walked, name)
		next, err := unix.Openat(fd, name, dirWalkFlag|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			if err := unix.Mkdirat(fd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, &fs.PathError{Op: "mkdir", Path: walked, Err: err}
			}
			next, err = unix.Openat(fd, name, dirWalkFlag|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		unix.Close(fd)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, fmt.Errorf("%s is no longer a directory (a link or file took its place): %w", walked, ErrTargetChanged)
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: walked, Err: err}
		}
		fd = next
	}
	return fd, nil
}

func goMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}
