package tool

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestGrepLeavesNoDescriptorOpen searches a tree of many directories, with
// a stop before the end too, and checks the process has as many open
// descriptors afterwards as before: the walk keeps each directory open
// while grep opens its files by name relative to it.
func TestGrepLeavesNoDescriptorOpen(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count descriptors")
	}
	env := newTestEnv(t)
	for i := range 60 {
		writeFile(t, filepath.Join(env.Cwd, fmt.Sprintf("d%02d/e/f.txt", i)), "needle\n")
		writeFile(t, filepath.Join(env.Cwd, fmt.Sprintf("d%02d/g.txt", i)), "hay\n")
	}
	// Descriptors of files in the tree: other tests' descriptors may come
	// and go meanwhile.
	count := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
			if err == nil && strings.HasPrefix(target, env.Cwd) {
				n++
			}
		}
		return n
	}
	before := count()
	for _, max := range []int{maxGrepResults, 1} { // 1: the walk stops early
		got := grepLines(t, env, map[string]any{"pattern": "needle", "max_results": max})
		if len(got) < 2 {
			t.Fatalf("max %d: got %q", max, got)
		}
	}
	if after := count(); after != before {
		t.Fatalf("%d descriptors open before the searches, %d after", before, after)
	}
}
