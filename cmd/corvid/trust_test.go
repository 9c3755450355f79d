package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/config"
)

// corvid trust warns when there is nothing to trust, lists what is trusted
// (and what changed since), and revokes.
func TestTrustWarnsListsAndRevokes(t *testing.T) {
	env := config.MapEnv{"CORVID_HOME": t.TempDir()}
	proj := t.TempDir()
	run := func(c trustCmd) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := runTrust(env, proj, c, &out, &errOut); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		return out.String(), errOut.String()
	}
	out, errOut := run(trustCmd{})
	if out != "" || !strings.Contains(errOut, "has no "+config.ProjectConfigName+", agent.leviath or profile in .corvid/agents/; nothing to trust") {
		t.Errorf("trust without a project config: stdout %q, stderr %q", out, errOut)
	}
	if out, _ := run(trustCmd{List: true}); strings.TrimSpace(out) != "No project is trusted." {
		t.Errorf("--list after the warning: %q", out)
	}
	cfg := filepath.Join(proj, config.ProjectConfigName)
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("default_mode = \"ask\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _ := run(trustCmd{}); !strings.HasPrefix(out, "Trusted ") || !config.IsTrusted(env, proj) {
		t.Fatalf("trust: %q, trusted=%v", out, config.IsTrusted(env, proj))
	}
	if out, _ := run(trustCmd{List: true}); !strings.Contains(out, "\ttrusted") {
		t.Errorf("--list: %q", out)
	}
	if err := os.WriteFile(cfg, []byte("default_mode = \"yolo\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _ := run(trustCmd{List: true}); !strings.Contains(out, "changed since trusted") {
		t.Errorf("--list after the file changed: %q", out)
	}
	if out, _ := run(trustCmd{Revoke: true}); !strings.HasPrefix(out, "No longer trusted") {
		t.Errorf("--revoke: %q", out)
	}
	if _, errOut := run(trustCmd{Revoke: true}); !strings.Contains(errOut, "was not trusted") {
		t.Errorf("--revoke twice: %q", errOut)
	}
	if err := os.WriteFile(cfg, []byte("default_mode = \"ask\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if config.IsTrusted(env, proj) {
		t.Error("a revoked project is trusted again when its old content comes back")
	}
}
