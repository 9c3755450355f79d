package tool

import (
	"context"
	"errors"
	"io/fs"
	"os"
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

// realPath resolves symlinks in the longest existing prefix of p.
func realPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(p, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// LocalFS is the in-process file system.
type LocalFS struct{}

func (LocalFS) ReadTextFile(_ context.Context, path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func (LocalFS) WriteTextFile(_ context.Context, path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// RealPath resolves the symbolic links in the longest existing prefix of
// the absolute path p, the way InRoots sees it.
func RealPath(p string) string { return realPath(p) }
