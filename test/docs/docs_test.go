// Package docs holds the documentation to what it says: every shell block of
// README.md and docs/*.md that can run offline is run, and the configuration
// examples are loaded by the built corvid.
//
//	go test ./test/docs/
//
// A shell block (```sh, ```bash or ```shell) runs with bash -euo pipefail in a
// copy of the repository, with the built corvid as `./corvid` and first on
// PATH, an empty home, no provider keys and the keyring off; it must exit 0.
// A block that cannot run here (it needs the network, a key, a terminal, or
// runs the test suite itself) is listed in skipped with the reason; a listed
// block that no longer exists fails the test, so the list stays true.
package docs

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// skipped names each shell block that is not run, by file and its first
// command line, with why.
var skipped = map[string]string{
	"README.md|go test ./...": "runs the whole test suite, which includes this test",
	"README.md|git clone https://github.com/corvid-agent/corvid && cd corvid && go build -o corvid ./cmd/corvid":       "needs the network (github.com)",
	"docs/editors.md|git clone https://github.com/corvid-agent/corvid && cd corvid && go build -o corvid ./cmd/corvid": "needs the network (github.com)",
	"docs/agents.md|corvid agent-client --agent coder --yolo":                                                          "needs the coder profile of the example above installed in the user's config",
	"docs/codemode.md|go test -run '^$' -bench CodeModeTask -benchtime 1x ./test/bench/":                               "benchmarks: minutes of CPU, run by hand (bench/)",
	"docs/conformance.md|go test ./internal/conformance ./cmd/corvid -run 'Corvid|Broken|Conformance|Doctor'":          "runs other packages' tests, which `go test ./...` runs anyway",
	"docs/conformance.md|npm install --prefix /tmp/peer  @zed-industries/codex-acp":                                    "needs the network (npm) and the peers' provider keys",
	"docs/gas-city.md|corvid respond                 # list the open questions":                                        "answers a question that a running session asked (q1a2b3 is an example id)",
	"docs/kage.md|corvid acp -m zai:glm-4.6":                                                                           "needs a Z.AI and a Kimi key (a pinned -m without its key exits 1)",
	"docs/models.md|corvid auth login openai            # asks for the key without echo":                               "asks for a key on a terminal",
	`docs/print-mode.md|corvid run -p "explain this repository"        # also: corvid -p "…"`:                          "needs a provider key",
	"README.md|corvid serve": "starts the daemon, which runs until it is stopped (test/serve drives it)",
	"README.md|go build -o corvid ./cmd/corvid && go build -o corvid-tui ./cmd/corvid-tui && ./corvid tui": "opens the terminal UI, which needs a terminal (test/tui drives it in tmux); its --continue line needs a provider key, and its --agent coder line an installed profile",
	"docs/serve.md|corvid serve": "starts the daemon, which runs until it is stopped (test/serve drives it)",
	"docs/serve.md|corvid acp --connect auto -m anthropic:claude-sonnet-4-6":        "needs an Anthropic key, and starts a daemon that outlives the block",
	"docs/serve.md|head -c 32 /dev/urandom | base64 > ~/.config/corvid/serve.token": "starts the daemon, which runs until it is stopped",
	"docs/tui.md|corvid":                                             "opens the terminal UI, which needs a terminal (test/tui drives it in tmux)",
	"docs/tui.md|go test ./internal/tui/":                            "runs other packages' tests, which `go test ./...` runs anyway",
	"docs/status.md|go build -race -o /tmp/corvid-race ./cmd/corvid": "the race-detector run of the e2e suites: many minutes of CPU",
}

// block is one fenced code block of a Markdown file.
type block struct {
	file string // relative to the repository
	line int    // of the opening fence
	lang string
	text string
}

// firstCommand is the block's first line that is not a comment, with its
// spaces collapsed: what skipped names it by, with its file.
func (b block) firstCommand() string {
	for _, l := range strings.Split(b.text, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return strings.Join(strings.Fields(t), " ")
		}
	}
	return ""
}

// skipReason is why b is not run ("" = it runs) and the skipped key that
// says so: a key names a block when its file matches and the block's first
// command starts with the key's command (spaces collapsed).
func skipReason(b block) (key, reason string) {
	for k, why := range skipped {
		file, cmd, _ := strings.Cut(k, "|")
		if file == b.file && strings.HasPrefix(b.firstCommand(), strings.Join(strings.Fields(cmd), " ")) {
			return k, why
		}
	}
	return "", ""
}

var fence = regexp.MustCompile("^\\s*```(\\S*)\\s*$")

func blocks(t *testing.T, root string) []block {
	t.Helper()
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	var out []block
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			m := fence.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			start, body := i, []string{}
			for i++; i < len(lines) && !fence.MatchString(lines[i]); i++ {
				body = append(body, lines[i])
			}
			out = append(out, block{file: f, line: start + 1, lang: m[1], text: strings.Join(body, "\n") + "\n"})
		}
	}
	return out
}

func isShell(lang string) bool { return lang == "sh" || lang == "bash" || lang == "shell" }

func TestDocShellBlocksRun(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	all := blocks(t, root)
	seen := map[string]bool{}
	var run []block
	for _, b := range all {
		if !isShell(b.lang) {
			continue
		}
		if k, _ := skipReason(b); k != "" {
			seen[k] = true
			continue
		}
		run = append(run, b)
	}
	for k := range skipped {
		if !seen[k] {
			t.Errorf("skipped lists %q, which is no shell block of the docs any more: remove it", k)
		}
	}
	if len(run) < 3 {
		t.Errorf("only %d shell blocks run; the docs' runnable examples went missing", len(run))
	}
	w := newWorkspace(t, root)
	for _, b := range run {
		t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
			out, err := w.bash(b.text, 3*time.Minute)
			if err != nil {
				t.Errorf("the shell block at %s:%d failed (%v); list it in skipped with the reason if it cannot run offline:\n%s\noutput:\n%s", b.file, b.line, err, b.text, out)
			}
		})
	}
}

// workspace is a copy of the repository that the blocks run in, one after
// another, as a reader would type them.
type workspace struct {
	dir    string
	env    []string
	prefix []string // the command that isolates the network, if any
}

func newWorkspace(t *testing.T, root string) *workspace {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	dir := t.TempDir()
	if err := copyTree(root, dir); err != nil {
		t.Fatal(err)
	}
	binDir := t.TempDir()
	for _, p := range []string{filepath.Join(dir, "corvid"), filepath.Join(binDir, "corvid")} {
		if err := copyFile(bin, p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env, _ := testkit.IsolatedEnv(t, "CORVID_KEYRING=off")
	// The isolated home must not cost `go build` its caches.
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err == nil {
			env = append(env, v+"="+strings.TrimSpace(string(out)))
		}
	}
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + binDir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	w := &workspace{dir: dir, env: env}
	// Offline means offline: where the kernel lets an unprivileged user
	// have a network namespace of its own, the blocks run in one, with
	// only loopback, so a block that needs the network fails instead of
	// reaching it.
	if exec.Command("unshare", "-rn", "true").Run() == nil {
		w.prefix = []string{"unshare", "-rn"}
	} else {
		t.Log("no unprivileged network namespace here: the blocks run with the machine's network")
	}
	return w
}

func (w *workspace) bash(script string, limit time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append(append([]string(nil), w.prefix...), "bash", "-euo", "pipefail", "-c", script)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = w.dir, w.env
	// A block that leaves a process behind (a daemon) must not hold the
	// test on the pipes that process inherited.
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// copyTree copies the repository's files, leaving out what git and the
// tools keep beside them.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if slices.Contains([]string{".git", "node_modules", "dist"}, d.Name()) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(path, filepath.Join(dst, rel), info.Mode().Perm())
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}

// Every TOML block of docs/config.md, the configuration reference, is a user
// config that `corvid acp` starts with: acp runs the same start-up checks
// (the model, the permission mode and rules, the sandbox) and exits 1 on a
// problem, or serves and ends 0 at EOF.
func TestConfigReferenceExamplesStartCorvid(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := testkit.BuildCorvid(t)
	n := 0
	for _, b := range blocks(t, root) {
		if b.file != "docs/config.md" || b.lang != "toml" {
			continue
		}
		n++
		t.Run(fmt.Sprintf("line %d", b.line), func(t *testing.T) {
			env, home := withUserConfig(t, b.text)
			cmd := exec.Command(bin, "acp")
			cmd.Env, cmd.Dir = env, home
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("corvid acp with docs/config.md:%d as its config: %v\n%s\nconfig:\n%s", b.line, err, out, b.text)
			}
		})
	}
	if n < 5 {
		t.Errorf("docs/config.md has %d TOML blocks; the reference lost its examples", n)
	}
}

// The README's example config passes `corvid doctor` (its MCP server is
// started with npx, which doctor looks for on PATH).
func TestReadmeConfigPassesDoctor(t *testing.T) {
	if _, err := exec.LookPath("npx"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but npx is not on PATH")
		}
		t.Skip("npx is not on PATH; the README's MCP server needs it")
	}
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var cfg string
	for _, b := range blocks(t, root) {
		if b.file == "README.md" && b.lang == "toml" {
			cfg = b.text
		}
	}
	if cfg == "" {
		t.Fatal("README.md has no TOML block")
	}
	env, home := withUserConfig(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testkit.BuildCorvid(t), "doctor", "--timeout", "20s")
	cmd.Env, cmd.Dir = env, home
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[ok  ] mcp fs") {
		t.Errorf("corvid doctor with the README's config: %v\n%s", err, out)
	}
}

// withUserConfig is an isolated environment whose user config.toml is cfg.
func withUserConfig(t *testing.T, cfg string) (env []string, home string) {
	t.Helper()
	env, home = testkit.IsolatedEnv(t, "CORVID_KEYRING=off")
	dir := filepath.Join(home, ".corvid", "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return env, home
}
