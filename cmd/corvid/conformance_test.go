package main

import (
	"reflect"
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
