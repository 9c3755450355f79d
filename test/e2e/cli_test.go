package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	versionRE := regexp.MustCompile(`^corvid \S+ \(commit \S+, (built \S+|committed \S+|built at an unknown time)\)\n$`)
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

// Model ids: a mistyped provider gets a suggestion, an unknown model a
// warning at start (not a bare 404 at the first prompt), and script:FILE
// works from config as it does from -m.
func TestModelIDsAreCheckedAtStartAndReadTheSameEverywhere(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	_, errOut, code, _ := runCLI(t, devnull, "acp", "-m", "anthropc:claude-sonnet-4-6")
	if code != 1 || !strings.Contains(errOut, `unknown provider "anthropc"`) || !strings.Contains(errOut, "did you mean anthropic?") {
		t.Errorf("-m anthropc:…: exit %d, stderr %q", code, errOut)
	}

	env, home := testkit.IsolatedEnv(t, "ANTHROPIC_API_KEY=sk-ant-test")
	cmd := exec.Command(testkit.BuildCorvid(t), "acp", "-m", "anthropic:claude-sonet-9")
	cmd.Env, cmd.Dir, cmd.Stdin = env, home, devnull
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "claude-sonet-9 is not in corvid's catalog") || !strings.Contains(string(out), "corvid models") {
		t.Errorf("-m anthropic:claude-sonet-9: %v, output %q", err, out)
	}

	// config model = "script:FILE": a session opens with the scripted model.
	script := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(script, []byte(`{"responses":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgHome, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "config", "config.toml"), []byte("model = \"script:"+script+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ed := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: []string{"acp"}, Env: []string{"CORVID_HOME=" + cfgHome}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, rerr := ed.Initialize(ctx, testkit.Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	if sid := ed.NewSession(ctx, t.TempDir()); sid == "" {
		t.Fatal("session/new with the config's script model gave no session id")
	}
}

// corvid models names the local servers it looked for and did not find, so a
// user learns that Ollama and the others are supported at all.
func TestModelsNamesLocalServersThatAreNotRunning(t *testing.T) {
	// A port that was just free: nothing answers there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/v1"
	l.Close()
	env, home := testkit.IsolatedEnv(t, "OLLAMA_BASE_URL="+dead)
	cmd := exec.Command(testkit.BuildCorvid(t), "models")
	cmd.Env, cmd.Dir = env, home
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("corvid models: %v", err)
	}
	if !strings.Contains(string(out), "Local servers not running: ") || !strings.Contains(string(out), "ollama (no server at "+dead+")") {
		t.Errorf("corvid models:\n%s", out)
	}
}

// What stops `corvid acp` fails `corvid doctor` too, with the same words, and
// a mistyped config key gets a suggestion in plain text from both.
func TestDoctorFailsWhereACPRefusesToStart(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for cfg, want := range map[string]string{
		`default_mode = "yoloo"`: `unknown mode "yoloo"`,
		`defualt_mode = "ask"`:   `unknown keys defualt_mode (did you mean default_mode?)`,
	} {
		env, home := testkit.IsolatedEnv(t)
		dir := filepath.Join(home, ".corvid", "config")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		run := func(args ...string) (string, int) {
			cmd := exec.Command(testkit.BuildCorvid(t), args...)
			cmd.Env, cmd.Dir, cmd.Stdin = env, home, devnull
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return string(out), code
		}
		out, code := run("acp")
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("%s: corvid acp exit %d, %q; want 1 and %q", cfg, code, out, want)
		}
		out, code = run("doctor", "--timeout", "5s")
		if code == 0 || !strings.Contains(out, "[FAIL]") || !strings.Contains(out, want) {
			t.Errorf("%s: corvid doctor exit %d; want a failure saying %q:\n%s", cfg, code, want, out)
		}
	}
}
