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
	"github.com/corvid-agent/corvid/internal/testkit"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain removes the binary built for the tests afterwards.
func TestMain(m *testing.M) { testkit.Main(m) }

// corvidBin returns $CORVID_BIN if set, else ./cmd/corvid built once per test
// process (testkit.BuildCorvid, which also makes go test's cache track the
// binary's sources).
func corvidBin(tb testing.TB) string {
	tb.Helper()
	return testkit.BuildCorvid(tb)
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
