// Package security holds the attacks of issue #12 as tests: each one builds
// the real binary once, serves ACP with a scripted model that makes the
// attacker's tool calls, and checks through the fake editor (and the disk)
// that the permission gate held.
//
// Run with `go test ./test/security/`; set CORVID_BIN to test a prebuilt
// binary.
package security

import (
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }
