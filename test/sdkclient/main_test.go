// Package sdkclient drives the built corvid binary with an ACP client that corvid did not
// write: the client side of github.com/coder/acp-go-sdk. Where test/e2e checks every frame
// against the schema with our own fake editor, this package checks that a third-party
// client, with its own decoding and its own notification ordering, gets what it expects.
// It also holds the performance benchmarks of DESIGN.md §6, which use a raw line client.
//
// Start with scenarios_test.go; harness_test.go starts processes and records what the
// client receives. Set CORVID_BIN to test a prebuilt binary instead of building one.
//
//	go test ./test/sdkclient/
//	go test -run='^$' -bench=. -benchtime=50x ./test/sdkclient/
package sdkclient

import (
	"errors"
	"fmt"
	"github.com/corvid-agent/corvid/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is the binary built once per test process. It lives in a directory of its own
// (removed by TestMain) rather than in the first caller's t.TempDir, which is deleted as
// soon as that test ends while later tests still need the binary.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// corvidBin returns $CORVID_BIN if set, else ./cmd/corvid built once from the module root.
func corvidBin(tb testing.TB) string {
	tb.Helper()
	if bin := os.Getenv("CORVID_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			tb.Fatalf("CORVID_BIN: %v", err)
		}
		return abs
	}
	built.once.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			built.err = err
			return
		}
		built.dir, err = os.MkdirTemp("", "corvid-sdkclient-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(built.dir, "corvid")
		cmd := exec.Command("go", "build", "-o", built.bin, "./cmd/corvid")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build ./cmd/corvid: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		tb.Fatal(built.err)
	}
	testkit.TrackSources()
	return built.bin
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot() (string, error) {
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

// isolatedEnv is the environment for one corvid process: the caller's, minus anything
// that could reach a real home, config, store, keyring or provider, plus fresh
// directories under home.
func isolatedEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "CORVID_") ||
			strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"CORVID_HOME="+filepath.Join(home, ".corvid"),
		"CORVID_KEYRING=off",
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_RUNTIME_DIR="+filepath.Join(home, "run"),
	)
}
