package tool

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCreatesFileAndPreviewShowsNewFileDiff(t *testing.T) {
	env := newTestEnv(t)
	in := map[string]any{"path": "sub/new.txt", "content": "hello\n"}
	pv := Write{}.Describe(env, mustJSON(t, in))
	p := filepath.Join(env.Cwd, "sub/new.txt")
	if pv.Title != "Write sub/new.txt" || pv.Access != AccessWrite || pv.Paths[0] != p {
		t.Fatalf("preview %+v", pv)
	}
	if len(pv.Content) != 1 || pv.Content[0].Type != ContentDiff || pv.Content[0].OldText != nil || pv.Content[0].NewText != "hello\n" {
		t.Fatalf("preview content %+v", pv.Content)
	}
	res := run(t, Write{}, env, in)
	wantOK(t, res)
	if got := readFile(t, p); got != "hello\n" {
		t.Fatalf("file %q", got)
	}
}

func TestWriteOverwritePreviewCarriesOldText(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "a.txt")
	writeFile(t, p, "old\n")
	pv := Write{}.Describe(env, mustJSON(t, map[string]any{"path": p, "content": "new\n"}))
	if pv.Content[0].OldText == nil || *pv.Content[0].OldText != "old\n" {
		t.Fatalf("old text %+v", pv.Content[0])
	}
	wantOK(t, run(t, Write{}, env, map[string]any{"path": p, "content": "new\n"}))
	if readFile(t, p) != "new\n" {
		t.Fatal("not overwritten")
	}
}

func TestWriteToDirectoryIsAnError(t *testing.T) {
	env := newTestEnv(t)
	wantError(t, run(t, Write{}, env, map[string]any{"path": ".", "content": "x"}), "directory")
}

func TestEditReplacesUniqueText(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "main.go")
	writeFile(t, p, "package main\n\nfunc main() {\n\tprintln(1)\n}\n")
	in := map[string]any{"path": "main.go", "old_string": "println(1)", "new_string": "println(2)"}
	pv := Edit{}.Describe(env, mustJSON(t, in))
	if pv.Title != "Edit main.go" || len(pv.Content) != 1 || !strings.Contains(pv.Content[0].NewText, "println(2)") ||
		pv.Content[0].OldText == nil || !strings.Contains(*pv.Content[0].OldText, "println(1)") {
		t.Fatalf("preview %+v", pv)
	}
	if pv.Locations[0].Line != 4 {
		t.Fatalf("location line %d, want 4", pv.Locations[0].Line)
	}
	res := run(t, Edit{}, env, in)
	wantOK(t, res)
	if !strings.Contains(readFile(t, p), "println(2)") {
		t.Fatal("not edited")
	}
	if res.Locations[0].Line != 4 {
		t.Fatalf("result location %+v", res.Locations)
	}
}

func TestEditMissingTextIsAnErrorResultAndHintsAtWhitespace(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "f.txt")
	writeFile(t, p, "a\n\tindented line\nb\n")
	wantError(t, run(t, Edit{}, env, map[string]any{"path": p, "old_string": "nope", "new_string": "x"}), "not found")
	res := run(t, Edit{}, env, map[string]any{"path": p, "old_string": "    indented line\n", "new_string": "x"})
	wantError(t, res, "line 2")
	if readFile(t, p) != "a\n\tindented line\nb\n" {
		t.Fatal("file changed after a failed edit")
	}
}

func TestEditAmbiguousTextNamesTheLines(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "f.txt")
	writeFile(t, p, "x = 1\ny = 2\nx = 1\n")
	res := run(t, Edit{}, env, map[string]any{"path": p, "old_string": "x = 1", "new_string": "x = 3"})
	wantError(t, res, "occurs 2 times")
	wantError(t, res, "lines 1, 3")
	wantOK(t, run(t, Edit{}, env, map[string]any{"path": p, "old_string": "x = 1", "new_string": "x = 3", "replace_all": true}))
	if got := readFile(t, p); got != "x = 3\ny = 2\nx = 3\n" {
		t.Fatalf("replace_all gave %q", got)
	}
}

func TestMultiEditIsAtomic(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "f.txt")
	writeFile(t, p, "one\ntwo\nthree\n")
	res := run(t, Edit{}, env, map[string]any{"path": p, "edits": []map[string]any{
		{"old_string": "one", "new_string": "1"},
		{"old_string": "missing", "new_string": "2"},
	}})
	wantError(t, res, "edit 2 of 2")
	wantError(t, res, "No edit was applied")
	if readFile(t, p) != "one\ntwo\nthree\n" {
		t.Fatal("first edit applied although the second failed")
	}
	res = run(t, Edit{}, env, map[string]any{"path": p, "edits": []map[string]any{
		{"old_string": "one", "new_string": "1"},
		{"old_string": "1\ntwo", "new_string": "1\n2"},
	}})
	wantOK(t, res)
	if got := readFile(t, p); got != "1\n2\nthree\n" {
		t.Fatalf("got %q", got)
	}
}

func TestEditBadInputs(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "f.txt")
	writeFile(t, p, "abc\n")
	wantError(t, run(t, Edit{}, env, map[string]any{"path": p, "old_string": "abc", "new_string": "abc"}), "identical")
	wantError(t, run(t, Edit{}, env, map[string]any{"path": p, "old_string": "", "new_string": "x"}), "empty")
	wantError(t, run(t, Edit{}, env, map[string]any{"path": "nothere.txt", "old_string": "a", "new_string": "b"}), "does not exist")
	wantError(t, run(t, Edit{}, env, map[string]any{"old_string": "a", "new_string": "b"}), "path")
	wantError(t, run(t, Edit{}, env, map[string]any{"path": p, "old_string": "a", "new_string": "b",
		"edits": []map[string]any{{"old_string": "a", "new_string": "b"}}}), "not both")
}

func TestEditWithEmptyOldStringCreatesAFile(t *testing.T) {
	env := newTestEnv(t)
	wantOK(t, run(t, Edit{}, env, map[string]any{"path": "new.txt", "old_string": "", "new_string": "hi\n"}))
	if readFile(t, filepath.Join(env.Cwd, "new.txt")) != "hi\n" {
		t.Fatal("not created")
	}
}

func TestEditKeepsCRLFLineEndings(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "win.txt")
	writeFile(t, p, "a\r\nb\r\nc\r\n")
	wantOK(t, run(t, Edit{}, env, map[string]any{"path": p, "old_string": "a\nb", "new_string": "a\nB"}))
	if got := readFile(t, p); got != "a\r\nB\r\nc\r\n" {
		t.Fatalf("got %q", got)
	}
}

// recordingFS checks that file tools go through Env.FS.
type recordingFS struct {
	LocalFS
	reads, writes []string
}

func (r *recordingFS) ReadTextFile(ctx context.Context, p string) (string, error) {
	r.reads = append(r.reads, p)
	return r.LocalFS.ReadTextFile(ctx, p)
}

func (r *recordingFS) WriteTextFile(ctx context.Context, p, s string) error {
	r.writes = append(r.writes, p)
	return r.LocalFS.WriteTextFile(ctx, p, s)
}

func (r *recordingFS) WriteTarget(ctx context.Context, t Target, s string) error {
	r.writes = append(r.writes, t.Path)
	return r.LocalFS.WriteTarget(ctx, t, s)
}

func TestFileToolsUseEnvFS(t *testing.T) {
	env := newTestEnv(t)
	fs := &recordingFS{}
	env.FS = fs
	p := filepath.Join(env.Cwd, "f.txt")
	wantOK(t, run(t, Write{}, env, map[string]any{"path": p, "content": "a\n"}))
	wantOK(t, run(t, Edit{}, env, map[string]any{"path": p, "old_string": "a", "new_string": "b"}))
	wantOK(t, run(t, Read{}, env, map[string]any{"path": p}))
	if len(fs.writes) != 2 || len(fs.reads) < 2 {
		t.Fatalf("reads %v writes %v", fs.reads, fs.writes)
	}
}
