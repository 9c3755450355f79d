package dashboard

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// TestDashboardInChromium runs dashboard.test.mjs (the page in Debian's
// Chromium, driven by puppeteer-core) when both are installed; run.sh
// installs puppeteer-core, .ci/run installs Chromium and runs run.sh.
func TestDashboardInChromium(t *testing.T) {
	if _, err := os.Stat(filepath.Join("node_modules", "puppeteer-core")); err != nil {
		t.Skip("puppeteer-core is not installed: cd test/dashboard && npm ci (or bash test/dashboard/run.sh)")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("Chromium is not installed: apt-get install -y chromium")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	cmd := exec.Command(node, "--test", "--test-concurrency=1", "--test-timeout=120000", "dashboard.test.mjs", "live.test.mjs", "stored.test.mjs")
	cmd.Env = append(os.Environ(), "CORVID_BIN="+testkit.BuildCorvid(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node --test dashboard.test.mjs: %v\n%s", err, out)
	}
}
