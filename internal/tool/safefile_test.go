//go:build unix

package tool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestResolvePathFollowsDanglingLinks(t *testing.T) {
	env := newTestEnv(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	target := filepath.Join(outside, ".ssh", "authorized_keys") // does not exist
	link := filepath.Join(env.Cwd, "dangling")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if got := RealPath(link); got != target {
		t.Fatalf("RealPath(dangling) = %q, want %q", got, target)
	}
	if env.InRoots(link) {
		t.Fatal("a dangling link to a file outside the roots counts as inside")
	}
	// A relative dangling link through a directory link, and a chain.
	if err := os.Symlink(outside, filepath.Join(env.Cwd, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("out/x/../new.txt", filepath.Join(env.Cwd, "chain")); err != nil {
		t.Fatal(err)
	}
	if got, want := RealPath(filepath.Join(env.Cwd, "chain")), filepath.Join(outside, "new.txt"); got != want {
		t.Fatalf("RealPath(chain) = %q, want %q", got, want)
	}
	// A loop resolves to something, and does not hang.
	os.Symlink("loop2", filepath.Join(env.Cwd, "loop1"))
	os.Symlink("loop1", filepath.Join(env.Cwd, "loop2"))
	_ = RealPath(filepath.Join(env.Cwd, "loop1", "f"))
}

func TestFileToolsRefuseFIFOWithoutBlocking(t *testing.T) {
	env := newTestEnv(t)
	fifo := filepath.Join(env.Cwd, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct {
		tl    Tool
		input map[string]any
	}{
		{Read{}, map[string]any{"path": fifo}},
		{Write{}, map[string]any{"path": fifo, "content": "x"}},
		{Edit{}, map[string]any{"path": fifo, "old_string": "a", "new_string": "b"}},
		{Grep{}, map[string]any{"pattern": "x", "path": fifo}},
		{Delete{}, map[string]any{"path": fifo}},
		{Move{}, map[string]any{"source": fifo, "destination": filepath.Join(env.Cwd, "moved")}},
	} {
		pv := c.tl.Describe(env, mustJSON(t, c.input))
		res, err := c.tl.Run(context.Background(), env, Call{Input: mustJSON(t, c.input), Preview: &pv})
		if err != nil || !res.IsError || !strings.Contains(res.Output, "FIFO") {
			t.Errorf("%s on a FIFO: %+v, %v; want a tool error naming the FIFO", c.tl.Name(), res, err)
		}
	}
	// grep over the tree says it skipped it rather than "No matches."
	res := run(t, Grep{}, env, map[string]any{"pattern": "x"})
	if !strings.Contains(res.Output, "not a regular file") || !strings.Contains(res.Output, "pipe") {
		t.Errorf("grep over a tree with a FIFO: %q", res.Output)
	}
}

func TestGrepReportsTooLargeFile(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "big.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxGrepFile + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, path := range []string{p, env.Cwd} {
		res := run(t, Grep{}, env, map[string]any{"pattern": "needle", "path": path})
		if res.Output == "No matches." || !strings.Contains(res.Output, "too large") {
			t.Errorf("grep %s: %q; want the skipped file reported", path, res.Output)
		}
	}
}

// failingOps fails the write of the temporary file, as a full disk would.
type failingOps struct{ sysOps }

func (failingOps) Write(int, []byte) (int, error) { return 0, syscall.ENOSPC }

func TestFailedWriteLeavesOriginalIntact(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "keep.txt")
	writeFile(t, p, "precious\n")
	os.Chmod(p, 0o640)
	env.FS = LocalFS{ops: failingOps{}}
	for _, c := range []struct {
		tl    Tool
		input map[string]any
	}{
		{Write{}, map[string]any{"path": p, "content": "new\n"}},
		{Edit{}, map[string]any{"path": p, "old_string": "precious", "new_string": "gone"}},
	} {
		res := run(t, c.tl, env, c.input)
		if !res.IsError || !strings.Contains(res.Output, "no space") {
			t.Errorf("%s on a full disk: %q; want an error saying so", c.tl.Name(), res.Output)
		}
		if got := readFile(t, p); got != "precious\n" {
			t.Fatalf("%s failed but changed the file to %q", c.tl.Name(), got)
		}
	}
	entries, _ := os.ReadDir(env.Cwd)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	// A successful write keeps the mode.
	env.FS = LocalFS{}
	wantOK(t, run(t, Write{}, env, map[string]any{"path": p, "content": "new\n"}))
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode after write: %v, want 0640", st.Mode().Perm())
	}
}

func TestWriteRefusesLinkSwappedAfterQuestion(t *testing.T) {
	env := newTestEnv(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	secret := filepath.Join(outside, "secret")
	writeFile(t, secret, "s3cret\n")
	inside := filepath.Join(env.Cwd, "inside.txt")
	writeFile(t, inside, "hello\n")
	link := filepath.Join(env.Cwd, "link")
	if err := os.Symlink(inside, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tl    Tool
		input map[string]any
	}{
		{Write{}, map[string]any{"path": link, "content": "pwned\n"}},
		{Edit{}, map[string]any{"path": link, "old_string": "s3cret", "new_string": "pwned"}},
	} {
		os.Remove(link)
		os.Symlink(inside, link)
		pv := c.tl.Describe(env, mustJSON(t, c.input))
		if len(pv.Targets) != 1 || pv.Targets[0].Real != inside {
			t.Fatalf("%s: targets %+v", c.tl.Name(), pv.Targets)
		}
		os.Remove(link)
		os.Symlink(secret, link) // swapped while the user was being asked
		res, err := c.tl.Run(context.Background(), env, Call{Input: mustJSON(t, c.input), Preview: &pv})
		if err != nil || !res.IsError || !strings.Contains(res.Output, "permission was asked") {
			t.Errorf("%s after the swap: %+v %v", c.tl.Name(), res, err)
		}
		if got := readFile(t, secret); got != "s3cret\n" {
			t.Fatalf("%s wrote through the swapped link: %q", c.tl.Name(), got)
		}
	}
}

func TestAtomicWriteRefusesDirectorySwappedForLink(t *testing.T) {
	env := newTestEnv(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	sub := filepath.Join(env.Cwd, "sub")
	os.Mkdir(sub, 0o755)
	want := targetOf(filepath.Join(sub, "f.txt"))
	os.Remove(sub)
	os.Symlink(outside, sub)
	err := writeAtomic(sysOps{}, want, []byte("x"))
	if !errors.Is(err, ErrTargetChanged) {
		t.Fatalf("write under a directory swapped for a link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "f.txt")); err == nil {
		t.Fatal("the write followed the swapped link")
	}
}

func TestOutsidePreviewShowsNoContent(t *testing.T) {
	env := newTestEnv(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	secret := filepath.Join(outside, "secret.txt")
	writeFile(t, secret, "TOPSECRET\n")
	for _, c := range []struct {
		tl    Tool
		input map[string]any
	}{
		{Write{}, map[string]any{"path": secret, "content": "x"}},
		{Edit{}, map[string]any{"path": secret, "old_string": "a", "new_string": "b"}},
		{Delete{}, map[string]any{"path": secret}},
	} {
		pv := c.tl.Describe(env, mustJSON(t, c.input))
		b := mustJSON(t, pv.Content)
		if strings.Contains(string(b), "TOPSECRET") {
			t.Errorf("%s preview of an outside file shows its content: %s", c.tl.Name(), b)
		}
		if !strings.Contains(string(b), "outside the workspace") {
			t.Errorf("%s preview does not say the file is outside: %s", c.tl.Name(), b)
		}
	}
}

func TestPreviewOfHugeFileIsCapped(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "big.txt")
	line := strings.Repeat("x", 99) + "\n"
	writeFile(t, p, strings.Repeat(line, 50000)+"needle\n"+strings.Repeat(line, 50000)) // ~10 MB
	for _, c := range []struct {
		tl    Tool
		input map[string]any
	}{
		{Write{}, map[string]any{"path": p, "content": "small\n"}},
		{Edit{}, map[string]any{"path": p, "old_string": "needle", "new_string": "pin"}},
	} {
		pv := c.tl.Describe(env, mustJSON(t, c.input))
		if n := len(mustJSON(t, pv.Content)); n > 2*maxPreviewBytes {
			t.Errorf("%s preview is %d bytes", c.tl.Name(), n)
		}
		res := run(t, c.tl, env, c.input)
		if n := len(mustJSON(t, res.Content)); n > 2*maxPreviewBytes {
			t.Errorf("%s result content is %d bytes", c.tl.Name(), n)
		}
		writeFile(t, p, strings.Repeat(line, 50000)+"needle\n"+strings.Repeat(line, 50000))
	}
	pv := Edit{}.Describe(env, mustJSON(t, map[string]any{"path": p, "old_string": "needle", "new_string": "pin"}))
	b := string(mustJSON(t, pv.Content))
	if !strings.Contains(b, "needle") || !strings.Contains(b, "pin") || !strings.Contains(b, "line 49998") {
		t.Errorf("capped edit preview lost the change: %.300s", b)
	}
}

func TestReadPagesThroughHugeFile(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "huge.txt")
	var b strings.Builder
	for i := 0; b.Len() < maxTextFile+(1<<20); i++ {
		b.WriteString(strings.Repeat("y", 60) + "\n")
	}
	b.WriteString("the last line\n")
	writeFile(t, p, b.String())
	total := strings.Count(b.String(), "\n")
	res := run(t, Read{}, env, map[string]any{"path": p, "offset": total, "limit": 5})
	wantOK(t, res)
	if !strings.Contains(res.Output, "the last line") {
		t.Fatalf("last page: %q", res.Output)
	}
	res = run(t, Read{}, env, map[string]any{"path": p, "limit": 3})
	if !strings.Contains(res.Output, "more lines; read on with offset 4") {
		t.Fatalf("first page: %q", res.Output)
	}
}

func TestWriteThroughHardLinkLeavesOtherNameAlone(t *testing.T) {
	env := newTestEnv(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	secret := filepath.Join(outside, "authorized_keys")
	writeFile(t, secret, "mine\n")
	h := filepath.Join(env.Cwd, "h")
	if err := os.Link(secret, h); err != nil {
		t.Skipf("hard link across temp dirs: %v", err)
	}
	wantOK(t, run(t, Write{}, env, map[string]any{"path": h, "content": "theirs\n"}))
	if got := readFile(t, secret); got != "mine\n" {
		t.Fatalf("a write to a hard link inside changed the file outside: %q", got)
	}
}
