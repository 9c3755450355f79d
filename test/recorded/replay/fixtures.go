package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Read returns testdata/name.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CheckFixtures fails the test when a file in testdata is not listed in
// sums, its sha256 is not the listed one, or a listed file is missing: the
// recordings are public fixtures kept byte-identical to their sources
// (test/recorded/SOURCES.md, SOURCES-openai.md), never edited.
func CheckFixtures(t testing.TB, sums map[string]string) {
	t.Helper()
	checkFixtures(t, sums, "")
}

// CheckSums is CheckFixtures with the digests listed in testdata/SHA256SUMS
// (the `sha256sum` format), which is itself left out of the check.
func CheckSums(t testing.TB) {
	t.Helper()
	list, err := os.ReadFile(filepath.Join("testdata", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not \"<sha256>  <name>\"", line)
		}
		sums[name] = sum
	}
	checkFixtures(t, sums, "SHA256SUMS")
}

func checkFixtures(t testing.TB, sums map[string]string, skip string) {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || e.Name() == skip {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		got := hex.EncodeToString(sum[:])
		want, ok := sums[e.Name()]
		switch {
		case !ok:
			t.Errorf("testdata/%s is not listed (sha256 %s); add it with its source to test/recorded/SOURCES*.md", e.Name(), got)
		case got != want:
			t.Errorf("testdata/%s changed: sha256 %s, want %s; recorded fixtures stay byte-identical", e.Name(), got, want)
		}
		seen[e.Name()] = true
	}
	var missing []string
	for name := range sums {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("testdata/%s is listed but missing", m)
	}
}

// ModuleFile returns the bytes of file rel inside the module cache copy of
// module (the version go.mod requires), after checking its sha256. The
// test is skipped when the module's directory cannot be found (module not
// downloaded, no go command); a wrong digest fails it.
func ModuleFile(t testing.TB, module, rel, sha string) []byte {
	t.Helper()
	dir := moduleDir(t, module)
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Skipf("%s: %s not readable in the module cache (%v)", module, rel, err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != sha {
		t.Fatalf("%s/%s: sha256 %s, want %s; the recording is not the one this test was written against", module, rel, got, sha)
	}
	return b
}

var (
	modDirsMu sync.Mutex
	modDirs   = map[string]string{}
)

// moduleDir is `go list -m -f {{.Dir}} module`, run in the test's package
// directory (inside this module), falling back to GOMODCACHE/module@version.
func moduleDir(t testing.TB, module string) string {
	t.Helper()
	modDirsMu.Lock()
	defer modDirsMu.Unlock()
	if d, ok := modDirs[module]; ok {
		if d == "" {
			t.Skipf("module %s is not in the module cache (run `go mod download %s`)", module, module)
		}
		return d
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}\t{{.Version}}", module).Output()
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if err == nil && dir == "" && version != "" {
		if cache, cerr := exec.Command("go", "env", "GOMODCACHE").Output(); cerr == nil {
			d := filepath.Join(strings.TrimSpace(string(cache)), filepath.FromSlash(module)+"@"+version)
			if st, serr := os.Stat(d); serr == nil && st.IsDir() {
				dir = d
			}
		}
	}
	if err != nil {
		dir = ""
	}
	modDirs[module] = dir
	if dir == "" {
		t.Skipf("module %s is not in the module cache (run `go mod download %s`): %v", module, module, err)
	}
	return dir
}
