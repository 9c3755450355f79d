package tui_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// agentsDir is test/tui/agents, with the npm packages install.sh puts
// there; without them (or without node) the test skips, saying how to
// install, except under CI=true, where .ci/run installs them.
func agentsDir(t *testing.T) string {
	t.Helper()
	root, err := testkit.ModuleRoot()
	must(t, err)
	dir := filepath.Join(root, "test", "tui", "agents")
	missing := ""
	for _, f := range []string{"node_modules/@agentclientprotocol/sdk/package.json", "node_modules/.bin/codex-acp"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			missing = f
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node on PATH"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing (.ci/run runs test/tui/agents/install.sh)", missing)
		}
		t.Skipf("%s is missing: run `bash test/tui/agents/install.sh` (Node >= 20 and npm) to drive the SDK's agent and codex-acp", missing)
	}
	return dir
}

// offline runs argv in a network namespace of its own where the kernel
// lets us, so an agent cannot reach the network.
func offline(argv ...string) []string {
	if err := exec.Command("unshare", "-n", "true").Run(); err == nil {
		return append([]string{"unshare", "-n"}, argv...)
	}
	return argv
}

// corvid tui -- node sdk-agent.mjs: an agent built on the official
// TypeScript SDK's agent side. Its streamed Markdown, plan, tool card and
// permission question are shown; y answers the question with the
// agent's allow_once option; Esc cancels a turn; Ctrl+D quits with 0.
func TestDrivesAnSDKAgent(t *testing.T) {
	dir := agentsDir(t)
	s := newSession(t)
	tm := s.open(100, 30, nil, "tui", "--", "node", filepath.Join(dir, "sdk-agent.mjs"))
	tm.ready()
	tm.waitFor("mode Ask")
	tm.typeText("hi")
	tm.keys("Enter")
	q := tm.waitFor("[y/1]")
	for _, want := range []string{"Hello from the SDK agent.", "Touch sdk.txt", "Allow", "Refuse"} {
		if !strings.Contains(q, want) {
			t.Errorf("the pane lacks %q:\n%s", want, q)
		}
	}
	tm.keys("y")
	tm.waitFor("The user chose yes.")
	out := tm.idle()
	for _, want := range []string{"→ Allow", "permission: yes", "☑ Look at the request", "◐ Touch sdk.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("the pane lacks %q:\n%s", want, out)
		}
	}
	tm.typeText("cancel me")
	tm.keys("Enter")
	tm.waitFor("tick 3")
	tm.keys("Escape")
	tm.waitFor("⊘ cancelled")
	tm.idle()
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
}

// corvid tui -- codex-acp, offline and without a login: initialize and
// session/new reach it, and its auth_required answer becomes a login
// hint naming its methods; the TUI stays open until Ctrl+D, which exits 0.
func TestCodexACPAsksForALogin(t *testing.T) {
	dir := agentsDir(t)
	s := newSession(t)
	codexHome := filepath.Join(t.TempDir(), "codex")
	must(t, os.MkdirAll(codexHome, 0o700))
	tm := s.open(120, 30, []string{"CODEX_HOME=" + codexHome}, append([]string{"tui", "--"}, offline(filepath.Join(dir, "node_modules", ".bin", "codex-acp"))...)...)
	out := tm.waitFor("(Ctrl+D quits)")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"the agent needs a login (Authentication required)", "Login with ChatGPT",
		"Use CODEX_API_KEY: set CODEX_API_KEY in the environment", "Use OPENAI_API_KEY: set OPENAI_API_KEY"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the pane lacks %q:\n%s", want, out)
		}
	}
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
}
