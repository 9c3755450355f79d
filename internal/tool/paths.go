package tool

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Resolve makes p absolute against env.Cwd and cleans it.
func (env *Env) Resolve(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.Cwd, p)
	}
	return filepath.Clean(p)
}

// InRoots reports whether the absolute path p lies inside one of env.Roots,
// after resolving symlinks of the longest existing prefix, so that neither
// ".." nor a symlink escapes silently.
func (env *Env) InRoots(p string) bool {
	real := realPath(p)
	for _, root := range env.Roots {
		r := realPath(root)
		if real == r || strings.HasPrefix(real, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// realPath resolves every symbolic link in p, dangling ones included
// (see resolvePath): a link to a file that does not exist yet leads where a
// write would create it.
func realPath(p string) string { return resolvePath(p) }

// LocalFS is the in-process file system. It opens regular files only,
// without blocking, and writes atomically (see writeAtomic).
type LocalFS struct {
	ops fileOps // nil: the real system calls
}

func (l LocalFS) fileOps() fileOps {
	if l.ops == nil {
		return sysOps{}
	}
	return l.ops
}

// ReadTextFile reads a regular file of at most maxTextFile bytes.
func (LocalFS) ReadTextFile(_ context.Context, path string) (string, error) {
	b, err := readRegular(path, maxTextFile)
	return string(b), err
}

// WriteTextFile writes path atomically, to wherever it leads now.
func (l LocalFS) WriteTextFile(_ context.Context, path, content string) error {
	return writeAtomic(l.fileOps(), targetOf(path), []byte(content))
}

// WriteTarget writes the target a permission question showed, atomically,
// and refuses if the path leads elsewhere now.
func (l LocalFS) WriteTarget(_ context.Context, t Target, content string) error {
	if msg := checkTarget(t); msg != "" {
		return fmt.Errorf("%s: %w", msg, ErrTargetChanged)
	}
	return writeAtomic(l.fileOps(), t, []byte(content))
}

// RealPath resolves the symbolic links in the longest existing prefix of
// the absolute path p, the way InRoots sees it.
func RealPath(p string) string { return realPath(p) }
