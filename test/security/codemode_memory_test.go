package security

// Issue #29 item 3: a codeMode script that allocates gigabytes in one
// builtin call. The 5 ms heap watchdog cannot stop an allocation already
// inside one builtin, so before the fix the process peaked at 3.2 GiB
// (replace) and 3.8 GiB (join). Each allocating operation must be checked
// against the memory budget before it runs.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// runScriptAttack serves corvid with a scripted model whose one tool call
// is run_script(script) in a codeMode "all" session, with config as the
// user's config.toml; it returns the script's tool result text and the
// process's peak RSS.
func runScriptAttack(t *testing.T, script, config string) (string, int64) {
	t.Helper()
	home := t.TempDir()
	if config != "" {
		if err := os.MkdirAll(filepath.Join(home, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	model := rtScript(t, rtTool("run_script", map[string]any{"script": script}), rtText("done"))
	c := rtStart(t, model, testkit.Options{Env: []string{"CORVID_HOME=" + home}})
	var res struct {
		SessionID string `json:"sessionId"`
	}
	c.MustCall(c.ctx, "session/new", map[string]any{"cwd": c.workspace, "mcpServers": []any{},
		"_meta": map[string]any{"codebuddy.ai/codeMode": "all"}}, &res)
	if stop, rerr := c.Prompt(c.ctx, res.SessionID, "run it"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: stop %q, error %v\nstderr:\n%s", stop, rerr, c.Stderr())
	}
	a := &fileAgent{Editor: c.Editor, ctx: c.ctx, sid: res.SessionID}
	peak := a.peakRSS()
	var text string
	for _, r := range a.toolResults() {
		text += r.status + ": " + r.text
	}
	return text, peak
}

func TestCodeModeScriptCannotAllocateGigabytesInOneCall(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates hundreds of MiB")
	}
	for _, c := range []struct {
		name, script, config, op string
		peak                     int64
	}{
		// The default budget (512 MiB): x fits, the replace (3 GB) does not.
		{"replace", `x = "a" * 300000000` + "\n" + `x.replace("a", "aaaaaaaaaa")`, "", "string.replace", 1 << 30},
		// A budget that lets x (900 MB) be made: joining it twice does not fit.
		{"join", `x = "a" * 900000000` + "\n" + `y = "".join([x, x])`, "[code_mode]\nmax_memory_mb = 1024\n", "string.join", 3 << 29},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			text, peak := runScriptAttack(t, c.script, c.config)
			if !strings.Contains(text, "memory limit reached") || !strings.Contains(text, c.op+" would allocate") {
				t.Errorf("the script's result does not say that %s would pass the memory limit:\n%s", c.op, text)
			}
			if peak < 0 {
				t.Skip("no VmHWM in /proc")
			}
			t.Logf("peak RSS %d MiB in %v", peak>>20, time.Since(start).Round(time.Millisecond))
			if peak > c.peak {
				t.Errorf("corvid peaked at %d MiB of RSS, want at most %d MiB: the call allocated before it was checked", peak>>20, c.peak>>20)
			}
		})
	}
}
