package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"time"

	"github.com/corvid-agent/corvid/internal/conformance"
)

// conformanceCmd runs the ACP conformance kit against any agent command.
type conformanceCmd struct {
	ReportJSON string        `name:"report-json" placeholder:"FILE" help:"Also write every requirement, with the transcript of each failure, to FILE as JSON."`
	Timeout    time.Duration `name:"timeout" default:"10s" help:"Time limit for each check (each runs against a fresh agent process)."`
	Scripted   bool          `name:"scripted" help:"The agent accepts corvid's -m script:FILE: the runner writes model scripts into its temporary directory, so checks that need a model turn run without credentials."`
	Only       []string      `name:"only" sep:"," placeholder:"AREA" help:"Run only these areas (comma-separated): stdio, envelope, initialize, sessions, prompt, content, config, client-capabilities, extensibility, schema."`
	Env        []string      `name:"env" placeholder:"KEY=VALUE" help:"Add KEY=VALUE to the agent's environment (repeatable); it otherwise gets only PATH, locale and a temporary HOME/XDG."`
	Agent      []string      `arg:"" passthrough:"" name:"agent" help:"The agent command and its arguments, after --, e.g. -- corvid acp."`
}

// agentCommand is the passthrough argument without the "--" kong keeps.
func (c *conformanceCmd) agentCommand() []string {
	if len(c.Agent) > 0 && c.Agent[0] == "--" {
		return c.Agent[1:]
	}
	return c.Agent
}

func (c *conformanceCmd) Run() error {
	agent, err := resolveAgent(c.agentCommand())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := conformance.Run(ctx, conformance.Options{
		Agent:    agent,
		Timeout:  c.Timeout,
		Scripted: c.Scripted,
		Only:     c.Only,
		Env:      c.Env,
		Progress: func(check string, d time.Duration) {
			fmt.Fprintf(os.Stderr, "conformance: %s done in %s\n", check, d.Round(time.Millisecond))
		},
	})
	if err != nil {
		return err
	}
	// The table quotes what the agent under test said (its errors, its
	// names): on a terminal shown, not obeyed (toStdout).
	if err := toStdout(rep.WriteTable); err != nil {
		return err
	}
	if c.ReportJSON != "" {
		if err := rep.WriteJSON(c.ReportJSON); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	if !rep.OK() {
		return fmt.Errorf("the agent fails required checks")
	}
	return nil
}

// resolveAgent finds the agent's program before any check runs, so a
// missing one is one clear error and not a FAIL per check. "corvid" not on
// PATH means this very binary.
func resolveAgent(agent []string) ([]string, error) {
	if len(agent) == 0 {
		return nil, errors.New("name the agent command after --, e.g. corvid conformance -- corvid acp")
	}
	if _, err := exec.LookPath(agent[0]); err == nil {
		return agent, nil
	} else if agent[0] != "corvid" {
		return nil, fmt.Errorf("agent command %q: %w", agent[0], err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("corvid is not on PATH and this binary cannot be found: %w", err)
	}
	return append([]string{self}, agent[1:]...), nil
}
