// Package scenarios runs the behaviour specifications in this directory: each *.txtar
// file is a scripted model, a workspace, the client's steps and the transcript the built
// corvid must produce (see README.md). `go test ./test/scenarios -update` rewrites the
// transcripts from what the binary sent; review the diff before committing it.
package scenarios

import (
	"flag"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/scenario"
)

var update = flag.Bool("update", false, "rewrite each scenario's transcript from the binary's output")

func TestMain(m *testing.M) { testkit.Main(m) }

func TestScenarios(t *testing.T) {
	scenario.RunDir(t, ".", scenario.Options{Update: *update})
}
