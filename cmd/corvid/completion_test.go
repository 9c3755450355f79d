package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// script prints the completion script for shell from corvid's real CLI.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("corvid"), kong.Exit(func(int) { t.Fatal("kong exited") }))
	if err != nil {
		t.Fatal(err)
	}
	k, err := parser.Parse([]string{"completion", shell})
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	err = k.Run()
	os.Stdout = stdout
	w.Close()
	var b bytes.Buffer
	b.ReadFrom(r)
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The bash script, run by a real bash, completes commands, subcommands of
// nested commands and aliases, and flags of the command typed so far.
func TestBashCompletionCompletesCommandsAndFlags(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	path := filepath.Join(t.TempDir(), "corvid.bash")
	if err := os.WriteFile(path, []byte(completionScript(t, "bash")), 0o644); err != nil {
		t.Fatal(err)
	}
	for words, want := range map[string]string{
		"corvid sess":              "sessions",
		"corvid sessions ":         "list show export rm",
		"corvid acp -m x --log":    "--log-file --log-level --login",
		"corvid rpc --allo":        "--allow", // an alias has its command's flags
		"corvid auth ":             "login logout status",
		"corvid completion ":       "",
		"corvid sessions list --j": "--json",
	} {
		ws := strings.Fields(words)
		if strings.HasSuffix(words, " ") {
			ws = append(ws, "")
		}
		script := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _corvid; echo "${COMPREPLY[*]}"`
		out, err := exec.Command("bash", append([]string{"-c", script, "bash", path}, ws...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("completing %q = %q, want %q", words, got, want)
		}
	}
}

// zsh and fish parse their scripts (each checked where the shell is installed).
func TestZshAndFishCompletionScriptsParse(t *testing.T) {
	for shell, check := range map[string][]string{"zsh": {"-n"}, "fish": {"--no-execute"}} {
		if _, err := exec.LookPath(shell); err != nil {
			t.Logf("%s is not installed; its script is not checked here", shell)
			continue
		}
		path := filepath.Join(t.TempDir(), "corvid."+shell)
		if err := os.WriteFile(path, []byte(completionScript(t, shell)), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(shell, append(check, path)...).CombinedOutput(); err != nil {
			t.Errorf("%s rejects its completion script: %v\n%s", shell, err, out)
		}
	}
}
