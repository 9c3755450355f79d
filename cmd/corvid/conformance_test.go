package main

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
)

// The lead mounts conformanceCmd in main.go's CLI; parse it the same way here.
type conformanceCLI struct {
	Conformance conformanceCmd `cmd:""`
}

func TestConformanceFlagsAndPassthroughAgentCommand(t *testing.T) {
	var cli conformanceCLI
	p, err := kong.New(&cli, kong.Name("corvid"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Parse([]string{"conformance", "--scripted", "--timeout", "3s", "--only", "prompt,envelope",
		"--report-json", "r.json", "--", "corvid", "acp", "--log-level", "debug", "-m", "x"})
	if err != nil {
		t.Fatal(err)
	}
	c := cli.Conformance
	if !c.Scripted || c.Timeout != 3*time.Second || c.ReportJSON != "r.json" ||
		!reflect.DeepEqual(c.Only, []string{"prompt", "envelope"}) {
		t.Errorf("flags parsed as %+v", c)
	}
	if want := []string{"corvid", "acp", "--log-level", "debug", "-m", "x"}; !reflect.DeepEqual(c.agentCommand(), want) {
		t.Errorf("agent command = %q, want %q", c.agentCommand(), want)
	}
}

func TestConformanceDefaultsToTenSecondsPerCheck(t *testing.T) {
	var cli conformanceCLI
	p, err := kong.New(&cli, kong.Name("corvid"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse([]string{"conformance", "--", "some-agent"}); err != nil {
		t.Fatal(err)
	}
	if cli.Conformance.Timeout != 10*time.Second || !reflect.DeepEqual(cli.Conformance.agentCommand(), []string{"some-agent"}) {
		t.Errorf("parsed %+v", cli.Conformance)
	}
}

func TestACPFlagIsRewrittenOnlyBeforeTheSeparator(t *testing.T) {
	for in, want := range map[string]string{
		"--acp -m x":                    "acp -m x --compat codebuddy",
		"-m x --acp":                    "acp -m x --compat codebuddy",
		"--acp --compat= -m x":          "acp --compat= -m x",
		"conformance -- gemini --acp":   "conformance -- gemini --acp",
		"conformance --scripted -- x y": "conformance --scripted -- x y",
	} {
		if got := strings.Join(acpFlagArgs(strings.Fields(in)), " "); got != want {
			t.Errorf("acpFlagArgs(%q) = %q, want %q", in, got, want)
		}
	}
}

// The agent command is found before any check runs: "corvid" off PATH is
// this binary, anything else missing is one error.
func TestResolveAgentFindsCorvidAndNamesAMissingCommand(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := resolveAgent([]string{"corvid", "acp"})
	if err != nil || !reflect.DeepEqual(got, []string{self, "acp"}) {
		t.Errorf("corvid off PATH: %v %v", got, err)
	}
	if _, err := resolveAgent([]string{"no-such-agent", "--acp"}); err == nil || !strings.Contains(err.Error(), `"no-such-agent"`) {
		t.Errorf("missing agent: %v", err)
	}
	if _, err := resolveAgent(nil); err == nil {
		t.Error("no agent command: no error")
	}
}
