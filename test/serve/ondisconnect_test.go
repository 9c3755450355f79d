package serve

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// writeUserConfig writes the user's config.toml under home.
func writeUserConfig(t *testing.T, home, content string) {
	t.Helper()
	cfg := filepath.Join(home, ".corvid", "config", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// cutShort fails unless the slow turn of sid stopped with its client.
func cutShort(t *testing.T, d *daemon, sid, dir string) {
	t.Helper()
	got := replayAfter(t, d.sock, sid, dir, "END", 3*time.Second)
	if strings.Contains(got, "END") || !strings.Contains(got, "part-0") {
		t.Fatalf("replay under cancel: %q; want the answer cut short", got)
	}
}

// ranToItsEnd fails unless the slow turn of sid ran on after its client.
func ranToItsEnd(t *testing.T, d *daemon, sid, dir string) {
	t.Helper()
	if got := replayAfter(t, d.sock, sid, dir, "END", 15*time.Second); !strings.Contains(got, "part-39 END") {
		t.Fatalf("replay after the client left: %q; want the whole answer", got)
	}
}

// daemonWithConfig starts serve on the slow script in a home whose
// config.toml is content ("": none).
func daemonWithConfig(t *testing.T, content string, args ...string) (*daemon, string) {
	t.Helper()
	home := t.TempDir()
	if content != "" {
		writeUserConfig(t, home, content)
	}
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	args = append([]string{"-m", "script:" + script, "--yolo", "--listen", "unix:" + filepath.Join(dir, "s.sock")}, args...)
	return startDaemonIn(t, home, 1, args...), dir
}

func TestOnDisconnectFromTheConfig(t *testing.T) {
	d, dir := daemonWithConfig(t, "on_disconnect = \"cancel\"\n")
	cutShort(t, d, startTurnAndLeave(t, d, dir), dir)
}

func TestOnDisconnectFlagOverridesTheConfig(t *testing.T) {
	d, dir := daemonWithConfig(t, "on_disconnect = \"cancel\"\n", "--on-disconnect", "continue")
	ranToItsEnd(t, d, startTurnAndLeave(t, d, dir), dir)
}

func TestOnDisconnectInvalidInTheConfigStopsTheDaemon(t *testing.T) {
	home := t.TempDir()
	writeUserConfig(t, home, "on_disconnect = \"pause\"\n")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testkit.BuildCorvid(t), "serve", "-m", "script:x.json", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	cmd.Dir, cmd.Env = dir, isolatedEnv(home)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "on_disconnect") {
		t.Fatalf("serve with on_disconnect = \"pause\": %v\n%s\nwant a refusal naming on_disconnect", err, out)
	}
}

// SIGHUP applies a new on_disconnect to connections opened from then on.
func TestSIGHUPOnDisconnectReachesNewConnections(t *testing.T) {
	d, dir := daemonWithConfig(t, "")
	writeUserConfig(t, d.home, "on_disconnect = \"cancel\"\n")
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitLog(t, "SIGHUP: config reloaded", 1)
	cutShort(t, d, startTurnAndLeave(t, d, dir), dir)
}
