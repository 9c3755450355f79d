package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// runCLI runs the built binary with args in an isolated home and returns
// its stdout, stderr and exit code.
func runCLI(t *testing.T, stdin *os.File, args ...string) (stdout, stderr string, code int, home string) {
	t.Helper()
	env, home := testkit.IsolatedEnv(t)
	cmd := exec.Command(testkit.BuildCorvid(t), args...)
	cmd.Env, cmd.Dir = env, home
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("corvid %v: %v", args, err)
	}
	return out.String(), errOut.String(), code, home
}

// What a new user types first gets usage or a version, not a parse error.
func TestBareHelpAndVersionAnswerAsAUserExpects(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"--help"}} {
		out, errOut, code, _ := runCLI(t, nil, args...)
		if code != 0 || !strings.HasPrefix(out, "Usage: corvid <command>") || !strings.Contains(out, "acp") || errOut != "" {
			t.Errorf("corvid %v: exit %d, stdout %q, stderr %q", args, code, firstLine(out), errOut)
		}
	}
	out, _, code, _ := runCLI(t, nil, "help", "sessions")
	if code != 0 || !strings.HasPrefix(out, "Usage: corvid sessions <command>") {
		t.Errorf("corvid help sessions: exit %d, %q", code, firstLine(out))
	}
	versionRE := regexp.MustCompile(`^corvid \S+ \(commit \S+, built \S+\)\n$`)
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		out, errOut, code, _ := runCLI(t, nil, args...)
		if code != 0 || !versionRE.MatchString(out) || errOut != "" {
			t.Errorf("corvid %v: exit %d, stdout %q, stderr %q; want %s", args, code, out, errOut, versionRE)
		}
	}
}

// --log-level is read in any case and --log-file expands a quoted ~, as
// editors' settings pass both without a shell.
func TestLogFlagsTakeAnyCaseAndExpandHome(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(script, []byte(`{"responses":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	out, errOut, code, home := runCLI(t, devnull, "acp", "-m", "script:"+script, "--log-level", "DEBUG", "--log-file", "~/corvid.log")
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "corvid.log")); err != nil {
		t.Errorf("--log-file ~/corvid.log did not land in the home directory: %v", err)
	}
	_, errOut, code, _ = runCLI(t, devnull, "acp", "-m", "script:"+script, "--log-level", "loud")
	if code == 0 || !strings.Contains(errOut, "trace, debug, info, warn or error") {
		t.Errorf("--log-level loud: exit %d, stderr %q", code, errOut)
	}
}

// `corvid acp --login` with no terminal names a command that exists.
func TestACPLoginWithoutATerminalGivesAdviceThatWorks(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	_, errOut, code, _ := runCLI(t, devnull, "acp", "--login", "-m", "anthropic:claude-sonnet-4-6")
	if code == 0 || !strings.Contains(errOut, "corvid auth login anthropic --stdin") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// The advice is real: that command reads a key from a pipe.
	cmd := exec.Command(testkit.BuildCorvid(t), "auth", "login", "anthropic", "--stdin")
	env, home := testkit.IsolatedEnv(t)
	cmd.Env, cmd.Dir = env, home
	cmd.Stdin = strings.NewReader("sk-ant-test\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the advised command failed: %v\n%s", err, out)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
