package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newSearchTree lays out a small repository with a .gitignore.
func newSearchTree(t *testing.T) *Env {
	t.Helper()
	env := newTestEnv(t)
	files := map[string]string{
		".git/HEAD":              "ref: refs/heads/main\nneedle\n",
		".gitignore":             "build/\n*.log\n!keep.log\n",
		"main.go":                "package main\n\nfunc main() {\n\tneedle()\n}\n\nfunc needle() {}\n",
		"lib/util.go":            "package lib\n\n// Needle is exported.\nfunc Needle() int { return 1 }\n",
		"lib/.gitignore":         "generated.go\n",
		"lib/generated.go":       "package lib // needle\n",
		"lib/sub/deep.txt":       "a\nb\nneedle here\nc\nd\ne\nneedle again\nf\n",
		"build/out.go":           "needle\n",
		"debug.log":              "needle\n",
		"keep.log":               "needle\n",
		"docs/readme.md":         "no match here\n",
		"vendor/x/vendored.go":   "needle\n",
		"bin/tool":               "needle\x00\x01binary",
		"notes/long-line.txt":    strings.Repeat("x", 1000) + "needle\n",
		".hidden/config.toml":    "needle = true\n",
		"crlf.txt":               "needle\r\nother\r\n",
		"nested/repo/.gitignore": "*.tmp\n",
		"nested/repo/a.tmp":      "needle\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(env.Cwd, name), content)
	}
	return env
}

func grepLines(t *testing.T, env *Env, in map[string]any) []string {
	t.Helper()
	res := run(t, Grep{}, env, in)
	wantOK(t, res)
	if res.Output == "No matches." {
		return nil
	}
	return strings.Split(res.Output, "\n")
}

func TestGrepFilesModeHonoursGitignoreAndSkipsBinaries(t *testing.T) {
	env := newSearchTree(t)
	got := grepLines(t, env, map[string]any{"pattern": "needle"})
	want := []string{".hidden/config.toml", "crlf.txt", "keep.log", "lib/sub/deep.txt", "main.go",
		"nested/repo/a.tmp", "notes/long-line.txt", "vendor/x/vendored.go"}
	// nested/repo/a.tmp is ignored by nested/repo/.gitignore.
	want = append(want[:5], want[6:]...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestGrepLinesModeWithContext(t *testing.T) {
	env := newSearchTree(t)
	got := grepLines(t, env, map[string]any{"pattern": "needle", "path": "lib/sub", "mode": "lines", "context": 1})
	want := []string{
		"lib/sub/deep.txt-2-b",
		"lib/sub/deep.txt:3:needle here",
		"lib/sub/deep.txt-4-c",
		"--",
		"lib/sub/deep.txt-6-e",
		"lib/sub/deep.txt:7:needle again",
		"lib/sub/deep.txt-8-f",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
	// Overlapping context is merged, not repeated.
	got = grepLines(t, env, map[string]any{"pattern": "needle", "path": "lib/sub", "mode": "lines", "context": 3})
	if len(got) != 8 || got[0] != "lib/sub/deep.txt-1-a" || got[7] != "lib/sub/deep.txt-8-f" {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
}

func TestGrepCountsIncludeExcludeAndCase(t *testing.T) {
	env := newSearchTree(t)
	got := grepLines(t, env, map[string]any{"pattern": "needle", "mode": "counts", "include": "*.txt"})
	if strings.Join(got, ",") != "crlf.txt:1,lib/sub/deep.txt:2,notes/long-line.txt:1" {
		t.Fatalf("counts %q", got)
	}
	got = grepLines(t, env, map[string]any{"pattern": "needle", "include": "**/*.go", "exclude": "vendor"})
	if strings.Join(got, ",") != "main.go" {
		t.Fatalf("include/exclude %q", got)
	}
	got = grepLines(t, env, map[string]any{"pattern": "func needle", "ignore_case": true, "mode": "lines"})
	if strings.Join(got, ",") != "lib/util.go:4:func Needle() int { return 1 },main.go:7:func needle() {}" {
		t.Fatalf("ignore_case %q", got)
	}
	got = grepLines(t, env, map[string]any{"pattern": `^func \w+\(\) \{$`, "mode": "lines"})
	if strings.Join(got, ",") != "main.go:3:func main() {" {
		t.Fatalf("anchored regexp %q", got)
	}
}

func TestGrepLinesAreTrimmedAndCut(t *testing.T) {
	env := newSearchTree(t)
	got := grepLines(t, env, map[string]any{"pattern": "needle", "path": "crlf.txt", "mode": "lines"})
	if len(got) != 1 || got[0] != "crlf.txt:1:needle" {
		t.Fatalf("crlf %q", got)
	}
	got = grepLines(t, env, map[string]any{"pattern": "needle", "path": "notes", "mode": "lines"})
	if len(got) != 1 || len([]rune(got[0])) > maxGrepLineRunes+40 {
		t.Fatalf("long line not cut: %d runes", len([]rune(got[0])))
	}
}

func TestGrepCapsResults(t *testing.T) {
	env := newTestEnv(t)
	for i := range 30 {
		writeFile(t, filepath.Join(env.Cwd, "f", strings.Repeat("a", i+1)), "hit\nhit\n")
	}
	res := run(t, Grep{}, env, map[string]any{"pattern": "hit", "max_results": 5})
	lines := strings.Split(res.Output, "\n")
	if len(lines) != 6 || !strings.Contains(lines[5], "cut at 5") {
		t.Fatalf("output\n%s", res.Output)
	}
	res = run(t, Grep{}, env, map[string]any{"pattern": "hit", "max_results": 7, "mode": "lines"})
	if n := strings.Count(res.Output, ":hit"); n != 7 {
		t.Fatalf("%d lines shown\n%s", n, res.Output)
	}
}

func TestGrepBadInputs(t *testing.T) {
	env := newSearchTree(t)
	wantError(t, run(t, Grep{}, env, map[string]any{"pattern": "("}), "invalid regular expression")
	wantError(t, run(t, Grep{}, env, map[string]any{"pattern": "x", "mode": "all"}), "mode")
	wantError(t, run(t, Grep{}, env, map[string]any{"pattern": "x", "include": "[["}), "invalid glob")
	wantError(t, run(t, Grep{}, env, map[string]any{"pattern": "x", "path": "missing"}), "no such file")
	wantError(t, run(t, Grep{}, env, map[string]any{}), "pattern")
	if res := run(t, Grep{}, env, map[string]any{"pattern": "zzzz-not-there"}); res.Output != "No matches." {
		t.Fatalf("got %q", res.Output)
	}
}

func TestRequiredLiteral(t *testing.T) {
	cases := []struct {
		pattern    string
		ignoreCase bool
		lit        string
		fold, only bool
	}{
		{"needle", false, "needle", false, true},
		{`func\s+main`, false, "func", false, false},
		{`(foo|bar)baz+`, false, "ba", false, false},
		{`\bhandler\w*Requests`, false, "Requests", false, false},
		{`needle`, true, "needle", true, true},
		{`1234`, true, "1234", false, true},
		{`café`, true, "", false, false},
		{`a.b`, false, "a", false, false},
		{`x*`, false, "", false, false},
		{`line\nbreak`, false, "", false, false},
	}
	for _, c := range cases {
		lit, fold, only := requiredLiteral(c.pattern, c.ignoreCase)
		if !strings.EqualFold(string(lit), c.lit) || fold != c.fold || only != c.only {
			t.Errorf("requiredLiteral(%q, %v) = %q, %v, %v; want %q, %v, %v",
				c.pattern, c.ignoreCase, lit, fold, only, c.lit, c.fold, c.only)
		}
	}
}

func TestGrepIgnoreCaseMatchesUnicodeFolds(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, filepath.Join(env.Cwd, "a.txt"), "MaSK\n")
	writeFile(t, filepath.Join(env.Cwd, "b.txt"), "ma\u017Fk\n") // long s
	writeFile(t, filepath.Join(env.Cwd, "c.txt"), "mas\u212A\n") // Kelvin sign
	writeFile(t, filepath.Join(env.Cwd, "d.txt"), "mas\n")
	got := grepLines(t, env, map[string]any{"pattern": "mask", "ignore_case": true})
	if strings.Join(got, ",") != "a.txt,b.txt,c.txt" {
		t.Fatalf("got %q", got)
	}
}

func TestGlobFindsFilesHonouringGitignore(t *testing.T) {
	env := newSearchTree(t)
	res := run(t, Glob{}, env, map[string]any{"pattern": "**/*.go"})
	wantOK(t, res)
	var want []string
	for _, f := range []string{"lib/util.go", "main.go", "vendor/x/vendored.go"} {
		want = append(want, filepath.Join(env.Cwd, f))
	}
	if res.Output != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", res.Output)
	}
	res = run(t, Glob{}, env, map[string]any{"pattern": "*.{md,toml}"})
	if !strings.Contains(res.Output, "docs/readme.md") || !strings.Contains(res.Output, ".hidden/config.toml") {
		t.Fatalf("got\n%s", res.Output)
	}
	res = run(t, Glob{}, env, map[string]any{"pattern": "*.go", "path": "lib"})
	if res.Output != filepath.Join(env.Cwd, "lib/util.go") {
		t.Fatalf("got\n%s", res.Output)
	}
	wantError(t, run(t, Glob{}, env, map[string]any{"pattern": "[["}), "invalid")
	if res := run(t, Glob{}, env, map[string]any{"pattern": "*.nothing"}); !strings.Contains(res.Output, "No files") {
		t.Fatalf("got %q", res.Output)
	}
}

func TestGitignoreAboveTheSearchRootApplies(t *testing.T) {
	env := newSearchTree(t)
	// Searching inside lib still honours the root .gitignore and lib's own.
	got := grepLines(t, env, map[string]any{"pattern": "needle|Needle", "path": "lib"})
	if strings.Join(got, ",") != "lib/sub/deep.txt,lib/util.go" {
		t.Fatalf("got %q", got)
	}
	writeFile(t, filepath.Join(env.Cwd, "lib/sub/x.log"), "needle\n")
	got = grepLines(t, env, map[string]any{"pattern": "needle", "path": "lib/sub"})
	if strings.Join(got, ",") != "lib/sub/deep.txt" {
		t.Fatalf("root *.log rule not applied in a subdirectory: %q", got)
	}
}

func TestLsListsOneLevelOrMore(t *testing.T) {
	env := newSearchTree(t)
	if err := os.Symlink("main.go", filepath.Join(env.Cwd, "link.go")); err != nil {
		t.Fatal(err)
	}
	res := run(t, List{}, env, map[string]any{})
	wantOK(t, res)
	for _, want := range []string{"lib/", "main.go", "link.go@", ".gitignore", "build/"} {
		if !strings.Contains(res.Output+"\n", want+"\n") {
			t.Errorf("ls lacks %q:\n%s", want, res.Output)
		}
	}
	if strings.Contains(res.Output, "util.go") {
		t.Error("depth 1 descended")
	}
	res = run(t, List{}, env, map[string]any{"path": "lib", "depth": 3})
	for _, want := range []string{"sub/", "sub/deep.txt", "util.go"} {
		if !strings.Contains(res.Output+"\n", want+"\n") {
			t.Errorf("ls depth 3 lacks %q:\n%s", want, res.Output)
		}
	}
	if strings.Contains(res.Output, "generated.go") {
		t.Error("deep ls shows a gitignored file")
	}
	wantError(t, run(t, List{}, env, map[string]any{"path": "main.go"}), "not a directory")
	wantError(t, run(t, List{}, env, map[string]any{"path": "nope"}), "no such")
}

func TestLiteralFinderAgreesWithBytesIndex(t *testing.T) {
	texts := []string{"", "a", "corvidNeedle", "xxcorvidNeedlexx", "corvidNeedl", "NNNNcorvidNeedle", "Needle corvid corvidNeedle",
		"the needle_id and needle_id2", "ééé needle_id", "CORVIDNEEDLE", "nnnnnNNNNNcorvidneedle", "Needle_ID"}
	lits := []string{"corvidNeedle", "needle_id", "N", "é", "e"}
	for _, lit := range lits {
		f := newLiteralFinder([]byte(lit), false)
		ff := newLiteralFinder([]byte(lit), true)
		for _, text := range texts {
			if got, want := f.index([]byte(text)), strings.Index(text, lit); got != want {
				t.Errorf("index(%q in %q) = %d, want %d", lit, text, got, want)
			}
			if got, want := ff.index([]byte(text)), strings.Index(strings.ToLower(text), strings.ToLower(lit)); got != want {
				t.Errorf("fold index(%q in %q) = %d, want %d", lit, text, got, want)
			}
		}
	}
}
