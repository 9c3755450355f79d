package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// BuildCorvidPG returns a corvid that opens PostgreSQL stores: the default
// corvid with corvid-pg (./cmd/corvid built with -tags corvid_pg) beside
// it in a directory of their own, built once per test process. A command
// whose store is PostgreSQL goes through the default binary's hand-off to
// corvid-pg, as a release's does; corvid-pg itself is
// filepath.Join(filepath.Dir(path), "corvid-pg"). With $CORVID_BIN set,
// that binary (with its corvid-pg beside it, as a release installs them).
func BuildCorvidPG(t testing.TB) string {
	t.Helper()
	if os.Getenv("CORVID_BIN") != "" {
		return BuildCorvid(t)
	}
	def := BuildPackage(t, "./cmd/corvid")
	r := result("pg:./cmd/corvid")
	r.once.Do(func() {
		dir := filepath.Join(filepath.Dir(def), "pg")
		if r.err = os.MkdirAll(dir, 0o755); r.err != nil {
			return
		}
		r.path = filepath.Join(dir, "corvid"+exeSuffix())
		if err := os.Link(def, r.path); err != nil {
			r.err = copyFile(def, r.path)
			if r.err != nil {
				return
			}
		}
		r.err = goBuild(filepath.Join(dir, "corvid-pg"+exeSuffix()), "./cmd/corvid", "-tags", "corvid_pg")
	})
	if r.err != nil {
		t.Fatalf("testkit: %v", r.err)
	}
	return r.path
}

// BuildPackage builds the main package pkg (a path relative to the module root, like
// "./cmd/corvid") once per test process and returns the binary's path. Call [Main] from
// TestMain to remove the binaries afterwards.
func BuildPackage(t testing.TB, pkg string) string {
	t.Helper()
	r := result(pkg)
	r.once.Do(func() { r.path, r.err = build(pkg) })
	TrackSources()
	if r.err != nil {
		t.Fatalf("testkit: %v", r.err)
	}
	return r.path
}

// result is the build of key, made on first use.
func result(key string) *buildResult {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.bins == nil {
		builds.bins = map[string]*buildResult{}
	}
	r := builds.bins[key]
	if r == nil {
		r = &buildResult{}
		builds.bins[key] = r
	}
	return r
}

func build(pkg string) (string, error) {
	builds.mu.Lock()
	var err error
	if builds.dir == "" {
		builds.dir, err = os.MkdirTemp("", "testkit-bin")
	}
	dir := builds.dir
	builds.mu.Unlock()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_").Replace(pkg))
	return out, goBuild(out, pkg)
}

// goBuild runs go build -o out [flags] pkg in the module root.
func goBuild(out, pkg string, flags ...string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	args := append(append([]string{"build", "-o", out}, flags...), pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s %s: %v\n%s", strings.Join(flags, " "), pkg, err, b)
	}
	return nil
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
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
