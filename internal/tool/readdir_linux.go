package tool

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// readDirEntries lists a directory with getdents64 on a plain descriptor:
// os.Open would make the descriptor non-blocking and register it with the
// network poller, which costs more than listing a small directory, and a
// search lists thousands. The entry types come from the listing itself
// (an lstat only where the file system does not give one).
//
// The directory stays open: dirfd is its descriptor (-1 when it could not
// be opened), which the caller closes with closeDirFD once it is done with
// the entries; until then each entry carries it (see entryDirRef).
func readDirEntries(dir string) (entries []fs.DirEntry, dirfd int, err error) {
	fd, err := rawOpen(dir, syscall.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return nil, -1, err
	}
	out, err := listDirFD(fd, dir)
	return out, fd, err
}

// closeDirFD closes a descriptor readDirEntries returned.
func closeDirFD(fd int) {
	if fd >= 0 {
		rawClose(fd)
	}
}

// entryDirRef names an entry readDirEntries listed by its directory's
// descriptor, valid until the caller of readDirEntries closes it.
func entryDirRef(d fs.DirEntry) dirRef {
	if e, ok := d.(*direntEntry); ok {
		return dirRef{fd: e.dirfd, name: e.name}
	}
	return noDirRef
}

func listDirFD(fd int, dir string) ([]fs.DirEntry, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []fs.DirEntry
	for {
		n, err := rawGetdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if s := string(name); s != "." && s != ".." {
				e := &direntEntry{dir: dir, name: s, dirfd: fd}
				switch b[18] {
				case syscall.DT_REG:
					e.typ = 0
				case syscall.DT_DIR:
					e.typ = fs.ModeDir
				case syscall.DT_LNK:
					e.typ = fs.ModeSymlink
				case syscall.DT_FIFO:
					e.typ = fs.ModeNamedPipe
				case syscall.DT_SOCK:
					e.typ = fs.ModeSocket
				case syscall.DT_CHR:
					e.typ = fs.ModeDevice | fs.ModeCharDevice
				case syscall.DT_BLK:
					e.typ = fs.ModeDevice
				default: // DT_UNKNOWN
					st, err := os.Lstat(filepath.Join(dir, s))
					if err != nil {
						b = b[reclen:]
						continue // gone meanwhile
					}
					e.typ = st.Mode().Type()
				}
				out = append(out, e)
			}
			b = b[reclen:]
		}
	}
}

// direntBufs are getdents buffers, reused: a walk lists thousands of
// directories, and a fresh buffer for each is zeroed memory for nothing.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// direntEntry is an fs.DirEntry read by readDirEntries.
type direntEntry struct {
	dir, name string
	typ       fs.FileMode
	dirfd     int // dir's descriptor while the lister keeps it open
}

func (e *direntEntry) Name() string      { return e.name }
func (e *direntEntry) IsDir() bool       { return e.typ.IsDir() }
func (e *direntEntry) Type() fs.FileMode { return e.typ }
func (e *direntEntry) Info() (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(e.dir, e.name))
}
