package tool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBenchText writes a source-like text file of about size bytes and
// returns its path and line count.
func writeBenchText(b *testing.B, size int) (string, int) {
	b.Helper()
	dir := b.TempDir()
	p := filepath.Join(dir, "big.txt")
	var sb strings.Builder
	sb.Grow(size + 100)
	lines := 0
	for sb.Len() < size {
		fmt.Fprintf(&sb, "\tresult, err := handler.ServeRequest(ctx, request%d) // line %d of the file\n", lines%97, lines)
		lines++
	}
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p, lines
}

// BenchmarkReadFirstPage15MB reads the first 2000 lines of a 15 MB file,
// the way the model calls read (issue 18: ≤ 5 ms).
func BenchmarkReadFirstPage15MB(b *testing.B) {
	p, lines := writeBenchText(b, 15<<20)
	env := &Env{Cwd: filepath.Dir(p), Roots: []string{filepath.Dir(p)}, FS: LocalFS{}}
	for _, c := range []struct {
		name   string
		offset int
	}{{"first", 0}, {"middle", lines / 2}, {"last", lines - 1999}} {
		b.Run(c.name, func(b *testing.B) {
			in := mustJSONB(b, map[string]any{"path": p, "offset": c.offset, "limit": 2000})
			for b.Loop() {
				res, err := Read{}.Run(context.Background(), env, Call{Input: in})
				if err != nil || res.IsError {
					b.Fatalf("%v %s", err, res.Output)
				}
			}
		})
	}
}
