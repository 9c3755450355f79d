package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var builds struct {
	mu   sync.Mutex
	dir  string
	bins map[string]*buildResult
}

type buildResult struct {
	once sync.Once
	path string
	err  error
}

// BuildCorvid returns the corvid binary: $CORVID_BIN if set, else ./cmd/corvid built once
// per test process.
func BuildCorvid(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("CORVID_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatalf("testkit: CORVID_BIN: %v", err)
		}
		return abs
	}
	return BuildPackage(t, "./cmd/corvid")
}

// BuildPackage builds the main package pkg (a path relative to the module root, like
// "./cmd/corvid") once per test process and returns the binary's path. Call [Main] from
// TestMain to remove the binaries afterwards.
func BuildPackage(t testing.TB, pkg string) string {
	t.Helper()
	builds.mu.Lock()
	if builds.bins == nil {
		builds.bins = map[string]*buildResult{}
	}
	r := builds.bins[pkg]
	if r == nil {
		r = &buildResult{}
		builds.bins[pkg] = r
	}
	builds.mu.Unlock()
	r.once.Do(func() { r.path, r.err = build(pkg) })
	TrackSources()
	if r.err != nil {
		t.Fatalf("testkit: %v", r.err)
	}
	return r.path
}

func build(pkg string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	builds.mu.Lock()
	if builds.dir == "" {
		builds.dir, err = os.MkdirTemp("", "testkit-bin")
	}
	dir := builds.dir
	builds.mu.Unlock()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_").Replace(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}

// Main runs the tests of a package that builds binaries and removes them afterwards:
//
//	func TestMain(m *testing.M) { testkit.Main(m) }
//
// after, if any, run once the tests have (to stop a server they shared).
func Main(m *testing.M, after ...func()) {
	code := m.Run()
	for _, f := range after {
		f()
	}
	builds.mu.Lock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	builds.mu.Unlock()
	os.Exit(code)
}

// ModuleRoot is the directory of the go.mod enclosing the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
