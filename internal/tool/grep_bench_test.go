package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchTreeFiles is the size of the benchmark tree (ARCHITECTURE.md §7: grep over
// 50k files within 2× ripgrep).
const benchTreeFiles = 50_000

var benchWords = strings.Fields(`func return if else for range var const type struct interface map
	string int error nil true false package import defer go select case switch default break
	continue chan make new len cap append copy delete panic recover context ctx err value key
	result request response handler server client config option buffer reader writer path file
	name index count total limit offset start end line text data bytes token parse format print`)

// generateBenchTree writes a deterministic tree of n source-like files
// (about 1.5 KB each, 100 per directory) with a .git directory and a
// .gitignore that excludes one directory. A few files hold the needles
// the benchmarks look for.
func generateBenchTree(dir string, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("ignored/\n*.tmp\n"), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	for i := range n {
		sub := fmt.Sprintf("pkg%03d/mod%02d", i/1000, (i/100)%10)
		if i%25 == 0 {
			sub = "ignored/" + sub
		}
		name := fmt.Sprintf("file%05d.go", i)
		b.Reset()
		b.WriteString("package mod\n\n")
		for l := range 30 {
			b.WriteByte('\t')
			for w := range 6 + rng.IntN(6) {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(benchWords[rng.IntN(len(benchWords))])
			}
			if l == 17 && i%500 == 7 {
				b.WriteString(" corvidNeedle")
			}
			if l == 9 && i%200 == 3 {
				b.WriteString("\nfunc HandleWidgetRequest(ctx context.Context) error {")
			}
			b.WriteByte('\n')
		}
		p := filepath.Join(dir, sub, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// benchTree returns the tree to search: $CORVID_GREP_BENCH_DIR (generated
// there when empty, so bench/grep.sh can time ripgrep on the same files),
// or a fresh temporary one.
func benchTree(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("CORVID_GREP_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitignore")); err != nil {
		if err := generateBenchTree(dir, benchTreeFiles); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkGrep50k runs the grep tool over a 50k-file tree, the way the
// model calls it; bench/grep.sh compares it with ripgrep.
func BenchmarkGrep50k(b *testing.B) {
	dir := benchTree(b)
	env := &Env{Cwd: dir, Roots: []string{dir}}
	for _, c := range []struct {
		name, pattern, mode string
		fold                bool
	}{
		{"literal", "corvidNeedle", "files", false},
		{"ignorecase", "corvidneedle", "files", true},
		{"regexp", `func Handle\w+Request\(`, "files", false},
		{"lines", `func Handle\w+Request\(`, "lines", false},
	} {
		b.Run(c.name, func(b *testing.B) {
			in := mustJSONB(b, map[string]any{"pattern": c.pattern, "mode": c.mode, "max_results": 2000, "ignore_case": c.fold})
			var res Result
			for b.Loop() {
				var err error
				res, err = Grep{}.Run(context.Background(), env, Call{Input: in})
				if err != nil || res.IsError || res.Output == "No matches." {
					b.Fatalf("%v %s", err, res.Output)
				}
			}
			if c.mode == "files" {
				b.ReportMetric(float64(strings.Count(res.Output, "\n")+1), "files")
			}
		})
	}
}

func mustJSONB(b *testing.B, v any) []byte {
	b.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkGrepModCache runs the grep tool over the Go module cache, real
// code in many small files (issue 18: within 1.1× ripgrep there; see
// TestGrepMatchesRipgrepOnModuleCache for the same files as ripgrep).
func BenchmarkGrepModCache(b *testing.B) {
	dir := modCache(b)
	env := &Env{Cwd: dir, Roots: []string{dir}}
	for _, c := range modCachePatterns {
		b.Run(c.name, func(b *testing.B) {
			in := mustJSONB(b, map[string]any{"pattern": c.pattern, "mode": "files", "max_results": 2000, "ignore_case": c.fold})
			var res Result
			for b.Loop() {
				var err error
				res, err = Grep{}.Run(context.Background(), env, Call{Input: in})
				if err != nil || res.IsError {
					b.Fatalf("%v %s", err, res.Output)
				}
			}
			b.ReportMetric(float64(strings.Count(res.Output, "\n")+1), "files")
		})
	}
}

// modCachePatterns are the searches timed and checked on the module cache.
var modCachePatterns = []struct {
	name, pattern string
	fold          bool
}{
	{"literal", `func NewClient\(`, false},
	{"ignorecase", `context\.withcancel`, true},
	{"regexp", `func \(\w+ \*\w+\) Close\(\) error`, false},
	{"rare", `corvidNeedleThatIsNowhere`, false},
}

// modCache is $GOMODCACHE (or $GOPATH/pkg/mod), skipping when it is absent.
func modCache(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("GOMODCACHE")
	if dir == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			tb.Skipf("go env GOMODCACHE: %v", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		tb.Skipf("no Go module cache at %q", dir)
	}
	return dir
}
