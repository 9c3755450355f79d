package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The file tools see the disk through this file: every path is resolved the
// way the kernel would follow it (dangling links included), only regular
// files are ever opened, and nothing is opened in a way that can block (a
// FIFO, /dev/stdin) or load without bound (/dev/zero, a 2 GB log).

const (
	// maxTextFile is the largest file read loads whole through an editor,
	// and edit loads at all: larger files page (read) or are refused
	// (edit) instead of growing the process.
	maxTextFile = 16 << 20
	// maxPreviewBytes caps the text a permission question or a tool_call
	// shows for one file change; the rest is summarised as "… N more bytes".
	maxPreviewBytes = 256 << 10
)

// NotRegularError says a path names something other than a regular file or
// directory: a FIFO, a device, a socket. No tool opens those.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; corvid's file tools only open regular files", e.Path, modeName(e.Mode))
}

// modeName names a non-regular file type for a message.
func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	}
	return "a special file"
}

// TooLargeError says a file is larger than an operation loads.
type TooLargeError struct {
	Path  string
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is too large (%s; the limit is %s)", e.Path, byteSize(e.Size), byteSize(e.Limit))
}

// byteSize renders n bytes for a person.
func byteSize(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 10<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// special reports whether a file mode is one no tool may open or change:
// FIFOs, devices, sockets and other irregular files. Directories and
// symbolic links are not special.
func special(m fs.FileMode) bool {
	return m&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0
}

// checkNotSpecial stats p following links and refuses a FIFO, device or
// socket. A missing file is fine (nil): the caller decides what that means.
func checkNotSpecial(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return nil
	}
	if special(st.Mode()) {
		return &NotRegularError{Path: p, Mode: st.Mode()}
	}
	return nil
}

// openRegular opens p for reading. It stats first, opens without blocking
// (a FIFO swapped in after the stat cannot hang the call) and checks the
// opened file again, so only a regular file is ever returned.
func openRegular(p string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, st, &NotRegularError{Path: p, Mode: st.Mode()}
	}
	f, err := os.OpenFile(p, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, st, &NotRegularError{Path: p, Mode: st.Mode()}
	}
	return f, st, nil
}

// readRegular reads a regular file of at most limit bytes whole.
func readRegular(p string, limit int64) ([]byte, error) {
	f, st, err := openRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, &TooLargeError{Path: p, Size: st.Size(), Limit: limit}
	}
	// The size can lie (a file growing, /proc): read one byte past the
	// limit to tell.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: p, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}

// ReadPrefix reads at most n bytes from the start of the regular file p and
// returns them with the file's size. It refuses FIFOs, devices and sockets
// and never blocks on one.
func ReadPrefix(p string, n int64) ([]byte, int64, error) {
	f, st, err := openRegular(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n))
	return b, st.Size(), err
}

// resolvePath resolves every symbolic link in the absolute path p, a
// dangling one included: the result is where an open or a create of p would
// land. A component that does not exist ends the resolution (nothing below
// it can be a link). A link loop leaves the rest unresolved; opening it
// fails anyway.
func resolvePath(p string) string {
	p = filepath.Clean(p)
	vol := filepath.VolumeName(p)
	sep := string(filepath.Separator)
	parts := splitPath(p[len(vol):])
	resolved := vol + sep
	links := 0
	for i := 0; i < len(parts); i++ {
		name := parts[i]
		if name == ".." {
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		st, err := os.Lstat(next)
		if err != nil {
			// Missing (or unreadable): nothing below can be a link we
			// could follow; the rest is lexical.
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		target, err := os.Readlink(next)
		if err != nil || links > 255 {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if filepath.IsAbs(target) {
			resolved = filepath.VolumeName(target) + sep
			target = target[len(filepath.VolumeName(target)):]
		}
		parts = append(splitPath(target), parts[i+1:]...)
		i = -1
	}
	return resolved
}

// splitPath splits p into its non-empty, non-"." components.
func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(filepath.ToSlash(p), "/") {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	return out
}

// Target is what a file call's path resolved to when its permission
// question was asked: the final place (every link followed, dangling ones
// too) and which file was there. A write is refused when the path no
// longer leads to the same place, so a link swapped between the question
// and the write cannot redirect it.
type Target struct {
	Path   string `json:"path"` // the path as the call gave it, made absolute
	Real   string `json:"real"` // where it leads
	Exists bool   `json:"exists"`
	Dev    uint64 `json:"-"`
	Ino    uint64 `json:"-"`
}

// targetOf resolves p now.
func targetOf(p string) Target {
	t := Target{Path: p, Real: resolvePath(p)}
	if st, err := os.Lstat(t.Real); err == nil {
		t.Exists = true
		t.Dev, t.Ino = fileID(st)
	}
	return t
}

// ErrTargetChanged is returned when a path no longer leads where it did
// when the user was asked.
var ErrTargetChanged = errors.New("the file changed since permission was asked")

// approvedTarget is the target the permission question showed for p, or p
// resolved now when the call was not described first.
func approvedTarget(call Call, p string) Target {
	if call.Preview != nil {
		for _, t := range call.Preview.Targets {
			if t.Path == p {
				return t
			}
		}
	}
	return targetOf(p)
}

// checkTarget reports how p changed since want was taken, "" if it did not.
func checkTarget(want Target) string {
	now := targetOf(want.Path)
	switch {
	case now.Real != want.Real:
		return fmt.Sprintf("%s now leads to %s, not to %s as when permission was asked; nothing was changed", want.Path, now.Real, want.Real)
	case now.Exists != want.Exists || now.Dev != want.Dev || now.Ino != want.Ino:
		return fmt.Sprintf("%s was replaced since permission was asked; nothing was changed", want.Path)
	}
	return ""
}

// TargetWriter is a file system that can write exactly the target a
// permission question showed (LocalFS: an atomic write that follows no
// link and refuses a changed target).
type TargetWriter interface {
	WriteTarget(ctx context.Context, t Target, content string) error
}
