package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// TestOfficialSDKClients runs sdk.test.mjs (the SDK's ws-client and
// http-client against the daemon, and its reference server as the oracle
// for status codes) when its npm packages are installed; run.sh installs
// them, and .ci/run runs run.sh.
func TestOfficialSDKClients(t *testing.T) {
	if _, err := os.Stat(filepath.Join("node_modules", "@agentclientprotocol", "sdk")); err != nil {
		t.Skip("the SDK is not installed: cd test/serve && npm ci (or bash test/serve/run.sh)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	cmd := exec.Command(node, "--test", "--test-concurrency=1", "--test-timeout=120000", "sdk.test.mjs")
	cmd.Env = append(os.Environ(), "CORVID_BIN="+testkit.BuildCorvid(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node --test sdk.test.mjs: %v\n%s", err, out)
	}
}
