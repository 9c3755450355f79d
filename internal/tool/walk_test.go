package tool

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestWalkPathsAreJoinedAndClean walks from roots spelled in unclean ways
// and checks every visited path is filepath.Join of the clean root and the
// relative path, as callers (grep's output, glob's) expect.
func TestWalkPathsAreJoinedAndClean(t *testing.T) {
	env := newTestEnv(t)
	for _, f := range []string{"a.go", "sub/b.go", "sub/deeper/c.go"} {
		writeFile(t, filepath.Join(env.Cwd, f), "x\n")
	}
	root := env.Cwd
	for _, spelled := range []string{root, root + "/", root + "/.", root + "/sub/..", root + "//"} {
		var mu sync.Mutex
		var got, want []string
		err := walkTree(context.Background(), spelled, walkOptions{}, func(path, rel string, _ fs.DirEntry) bool {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, path)
			want = append(want, filepath.Join(root, filepath.FromSlash(rel)))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(want)
		if len(got) != 5 || !slices.Equal(got, want) {
			t.Errorf("root %q: visited %q, want %q", spelled, got, want)
		}
	}
}
