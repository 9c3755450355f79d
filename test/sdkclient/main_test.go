// Package sdkclient drives the built corvid binary with an ACP client that corvid did not
// write: the client side of github.com/coder/acp-go-sdk. Where test/e2e checks every frame
// against the schema with our own fake editor, this package checks that a third-party
// client, with its own decoding and its own notification ordering, gets what it expects.
// It also holds the performance benchmarks of ARCHITECTURE.md §7, which use a raw line client.
//
// Start with scenarios_test.go; harness_test.go starts processes and records what the
// client receives. Set CORVID_BIN to test a prebuilt binary instead of building one.
//
//	go test ./test/sdkclient/
//	go test -run='^$' -bench=. -benchtime=50x ./test/sdkclient/
package sdkclient

import (
	"github.com/corvid-agent/corvid/internal/testkit"
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
