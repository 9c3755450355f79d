package tool

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
)

func TestReadNumbersLinesWithOffsetAndLimit(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "f.txt")
	writeFile(t, p, "one\ntwo\nthree\nfour\n")
	res := run(t, Read{}, env, map[string]any{"path": "f.txt"})
	if res.Output != "1\tone\n2\ttwo\n3\tthree\n4\tfour\n" {
		t.Fatalf("got %q", res.Output)
	}
	res = run(t, Read{}, env, map[string]any{"path": "f.txt", "offset": 2, "limit": 2})
	if res.Output != "2\ttwo\n3\tthree\n… (1 more lines; read on with offset 4)\n" {
		t.Fatalf("got %q", res.Output)
	}
	pv := Read{}.Describe(env, mustJSON(t, map[string]any{"path": "f.txt", "offset": 1, "limit": 80}))
	if pv.Title != "Read f.txt:1-80" || pv.Locations[0].Path != p || pv.Locations[0].Line != 1 {
		t.Fatalf("preview %+v", pv)
	}
	wantError(t, run(t, Read{}, env, map[string]any{"path": "f.txt", "offset": 9}), "past the end")
	wantError(t, run(t, Read{}, env, map[string]any{"path": "nope.txt"}), "no such file")
	wantError(t, run(t, Read{}, env, map[string]any{"path": "."}), "directory")
	wantError(t, run(t, Read{}, env, map[string]any{"path": "f.txt", "offset": -1}), "negative")
}

func TestReadRefusesBinaryAndCutsLongLines(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, filepath.Join(env.Cwd, "bin"), "ELF\x00\x01\x02")
	wantError(t, run(t, Read{}, env, map[string]any{"path": "bin"}), "binary")
	writeFile(t, filepath.Join(env.Cwd, "long"), strings.Repeat("é", 5000)+"\n")
	res := run(t, Read{}, env, map[string]any{"path": "long"})
	if !strings.Contains(res.Output, "(line truncated)") || len([]rune(res.Output)) > maxLineRunes+50 {
		t.Fatalf("long line: %d runes", len([]rune(res.Output)))
	}
	writeFile(t, filepath.Join(env.Cwd, "latin1"), "caf\xe9\n")
	wantOK(t, run(t, Read{}, env, map[string]any{"path": "latin1"}))
}

// onePixelPNG is a valid 1×1 PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

func TestReadReturnsImagesOnlyWhenTheModelTakesThem(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "dot.png")
	writeFile(t, p, string(onePixelPNG))
	wantError(t, run(t, Read{}, env, map[string]any{"path": p}), "does not accept images")
	env.Images = true
	res := run(t, Read{}, env, map[string]any{"path": p})
	wantOK(t, res)
	if len(res.Images) != 1 || res.Images[0].Type != llm.PartImage || res.Images[0].MimeType != "image/png" ||
		!bytes.Equal(res.Images[0].Data, onePixelPNG) {
		t.Fatalf("images %+v", res.Images)
	}
	writeFile(t, filepath.Join(env.Cwd, "fake.png"), "not an image")
	wantError(t, run(t, Read{}, env, map[string]any{"path": "fake.png"}), "content is")
}

func TestInRootsDetectsEscapes(t *testing.T) {
	env := newTestEnv(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	writeFile(t, filepath.Join(outside, "secret"), "s")
	if err := os.Symlink(outside, filepath.Join(env.Cwd, "link")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]bool{
		"a/b.go":                         true,
		"new/dir/file":                   true,
		"../x":                           false,
		"a/../../x":                      false,
		filepath.Join(outside, "secret"): false,
		"/etc/passwd":                    false,
		"link/secret":                    false,
		"link/new-file":                  false,
		".":                              true,
	}
	for p, want := range cases {
		abs := env.Resolve(p)
		if got := env.InRoots(abs); got != want {
			t.Errorf("InRoots(%s) = %v, want %v", p, got, want)
		}
	}
	// The preview reports the resolved path, whatever InRoots says: the
	// permission gate decides.
	pv := Write{}.Describe(env, mustJSON(t, map[string]any{"path": "../x", "content": ""}))
	if pv.Paths[0] != filepath.Join(filepath.Dir(env.Cwd), "x") {
		t.Fatalf("paths %v", pv.Paths)
	}
}

func TestDeleteFilesAndDirectories(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, filepath.Join(env.Cwd, "f.txt"), "bye\n")
	writeFile(t, filepath.Join(env.Cwd, "d/x"), "x")
	pv := Delete{}.Describe(env, mustJSON(t, map[string]any{"path": "f.txt"}))
	if pv.Kind != KindDelete || pv.Access != AccessWrite || len(pv.Content) != 1 || *pv.Content[0].OldText != "bye\n" {
		t.Fatalf("preview %+v", pv)
	}
	wantOK(t, run(t, Delete{}, env, map[string]any{"path": "f.txt"}))
	if _, err := os.Stat(filepath.Join(env.Cwd, "f.txt")); !os.IsNotExist(err) {
		t.Fatal("file still there")
	}
	wantError(t, run(t, Delete{}, env, map[string]any{"path": "d"}), "recursive")
	wantOK(t, run(t, Delete{}, env, map[string]any{"path": "d", "recursive": true}))
	wantError(t, run(t, Delete{}, env, map[string]any{"path": "d"}), "no such")
	wantError(t, run(t, Delete{}, env, map[string]any{"path": ".", "recursive": true}), "workspace root")
}

func TestMoveRenamesAndRefusesToClobber(t *testing.T) {
	env := newTestEnv(t)
	writeFile(t, filepath.Join(env.Cwd, "a"), "A")
	writeFile(t, filepath.Join(env.Cwd, "b"), "B")
	pv := Move{}.Describe(env, mustJSON(t, map[string]any{"source": "a", "destination": "x/y"}))
	if pv.Title != "Move a → x/y" || len(pv.Paths) != 2 || pv.Kind != KindMove {
		t.Fatalf("preview %+v", pv)
	}
	wantError(t, run(t, Move{}, env, map[string]any{"source": "a", "destination": "b"}), "exists")
	wantOK(t, run(t, Move{}, env, map[string]any{"source": "a", "destination": "x/y"}))
	if readFile(t, filepath.Join(env.Cwd, "x/y")) != "A" {
		t.Fatal("not moved")
	}
	wantOK(t, run(t, Move{}, env, map[string]any{"source": "x/y", "destination": "b", "overwrite": true}))
	if readFile(t, filepath.Join(env.Cwd, "b")) != "A" {
		t.Fatal("not overwritten")
	}
	wantError(t, run(t, Move{}, env, map[string]any{"source": "gone", "destination": "c"}), "no such")
	wantError(t, run(t, Move{}, env, map[string]any{"source": "b", "destination": "x"}), "directory")
}

func TestTodoReturnsTheCompletePlan(t *testing.T) {
	env := newTestEnv(t)
	res := run(t, Todo{}, env, map[string]any{"todos": []map[string]any{
		{"content": "write tests", "status": "completed", "priority": "high"},
		{"content": "fix bug", "status": "in_progress"},
		{"content": "ship", "status": "pending", "priority": "low"},
	}})
	wantOK(t, res)
	if !res.HasPlan || len(res.Plan) != 3 || res.Plan[1].Priority != "medium" || res.Plan[2].Status != "pending" {
		t.Fatalf("plan %+v", res.Plan)
	}
	if pv := (Todo{}).Describe(env, nil); pv.Access != AccessNone {
		t.Fatalf("preview %+v", pv)
	}
	empty := run(t, Todo{}, env, map[string]any{"todos": []map[string]any{}})
	if !empty.HasPlan || len(empty.Plan) != 0 {
		t.Fatal("an empty list must still clear the plan")
	}
	wantError(t, run(t, Todo{}, env, map[string]any{"todos": []map[string]any{{"content": "x", "status": "done"}}}), "status")
	wantError(t, run(t, Todo{}, env, map[string]any{"todos": []map[string]any{{"content": " ", "status": "pending"}}}), "no content")
}

func TestFetchReducesHTMLToMarkdown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(`<html><head><title>T</title><style>p{}</style></head><body>
<nav><a href="/">Home</a></nav>
<h1>Title</h1><p>Some <b>bold</b>   text with a <a href="/doc">link</a>.</p>
<script>alert(1)</script>
<ul><li>one</li><li>two</li></ul>
<pre><code>x := 1
y := 2</code></pre></body></html>`))
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"a":1}`))
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			w.Write(bytes.Repeat([]byte("z"), maxFetchOutput*2))
		case "/bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0, 1, 2})
		case "/slow":
			time.Sleep(2 * time.Second)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env := newTestEnv(t)
	res := run(t, Fetch{}, env, map[string]any{"url": srv.URL + "/page"})
	wantOK(t, res)
	for _, want := range []string{"# Title", "Some bold text with a [link](" + srv.URL + "/doc).", "- one\n- two", "```\nx := 1\ny := 2\n```"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if strings.Contains(res.Output, "alert") || strings.Contains(res.Output, "p{}") {
		t.Errorf("script or style leaked:\n%s", res.Output)
	}
	raw := run(t, Fetch{}, env, map[string]any{"url": srv.URL + "/page", "format": "raw"})
	if !strings.Contains(raw.Output, "<h1>Title</h1>") {
		t.Errorf("raw lost the HTML")
	}
	if res := run(t, Fetch{}, env, map[string]any{"url": srv.URL + "/json"}); !strings.Contains(res.Output, `{"a":1}`) {
		t.Errorf("json: %s", res.Output)
	}
	big := run(t, Fetch{}, env, map[string]any{"url": srv.URL + "/big"})
	if len(big.Output) > maxFetchOutput+500 || !strings.Contains(big.Output, "truncated") {
		t.Errorf("big body not capped: %d", len(big.Output))
	}
	wantError(t, run(t, Fetch{}, env, map[string]any{"url": srv.URL + "/bin"}), "not text")
	wantError(t, run(t, Fetch{}, env, map[string]any{"url": srv.URL + "/missing"}), "404")
	wantError(t, run(t, Fetch{}, env, map[string]any{"url": "file:///etc/passwd"}), "not an absolute http")
	env.HTTPClient = &http.Client{Timeout: 100 * time.Millisecond}
	wantError(t, run(t, Fetch{}, env, map[string]any{"url": srv.URL + "/slow"}), "failed")
	pv := Fetch{}.Describe(env, mustJSON(t, map[string]any{"url": "https://go.dev"}))
	if pv.Access != AccessNetwork || pv.URL != "https://go.dev" || pv.Kind != KindFetch {
		t.Fatalf("preview %+v", pv)
	}
}

// TestReadPageCountsTheRestLikeTheWholeFile checks the paged read's line
// count and notes against the file's own lines, through the disk and
// through an editor-style FS that loads the whole text.
func TestReadPageCountsTheRestLikeTheWholeFile(t *testing.T) {
	env := newTestEnv(t)
	for _, text := range []string{"a\nb\nc\n", "a\nb\nc", "a\r\nb\r\n\r\n", "\n\n\n", "x", strings.Repeat("line\n", 70000) + "end"} {
		p := filepath.Join(env.Cwd, "f.txt")
		writeFile(t, p, text)
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		for _, fsys := range []FS{LocalFS{}, &recordingFS{}} {
			env.FS = fsys
			for _, page := range [][2]int{{0, 1}, {1, 2}, {2, 1}, {len(lines), 1}, {len(lines) - 1, 5}, {0, 0}} {
				if page[0] > len(lines) {
					continue
				}
				res := run(t, Read{}, env, map[string]any{"path": p, "offset": page[0], "limit": page[1]})
				wantOK(t, res)
				start := max(page[0], 1)
				limit := page[1]
				if limit == 0 {
					limit = defaultReadLimit
				}
				last := min(start+limit-1, len(lines))
				var want strings.Builder
				for n := start; n <= last; n++ {
					fmt.Fprintf(&want, "%d\t%s\n", n, strings.TrimRight(lines[n-1], "\r"))
				}
				if last < len(lines) {
					fmt.Fprintf(&want, "… (%d more lines; read on with offset %d)\n", len(lines)-last, last+1)
				}
				if res.Output != want.String() && !(len(want.String()) > maxReadBytes) {
					t.Fatalf("%T %q page %v:\n got %.200q\nwant %.200q", fsys, text[:min(len(text), 20)], page, res.Output, want.String())
				}
			}
			wantError(t, run(t, Read{}, env, map[string]any{"path": p, "offset": len(lines) + 1}), fmt.Sprintf("(%d lines)", len(lines)))
		}
	}
}

// TestReadSkipsToALastLineLongerThanTheBuffer pages to a last line with no
// newline that spans several read buffers.
func TestReadSkipsToALastLineLongerThanTheBuffer(t *testing.T) {
	env := newTestEnv(t)
	p := filepath.Join(env.Cwd, "f.txt")
	writeFile(t, p, strings.Repeat("a\n", 40000)+strings.Repeat("z", 200000))
	res := run(t, Read{}, env, map[string]any{"path": p, "offset": 40001, "limit": 1})
	if !strings.HasPrefix(res.Output, "40001\tzzz") || !strings.Contains(res.Output, "(line truncated)") || strings.Contains(res.Output, "more lines") {
		t.Fatalf("last line: %.100q", res.Output)
	}
	res = run(t, Read{}, env, map[string]any{"path": p, "offset": 39999, "limit": 1})
	if res.Output != "39999\ta\n… (2 more lines; read on with offset 40000)\n" {
		t.Fatalf("got %q", res.Output)
	}
	wantError(t, run(t, Read{}, env, map[string]any{"path": p, "offset": 40002}), "(40001 lines)")
}
