package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// kage's `rpc`, Leviath's `agent-client` and CodeBuddy's `--acp` launch
// lines all reach the same ACP server.
func TestEntryPointAliasesServeACP(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	script := testkit.WriteScript(t, text("hi", 0))
	for _, args := range [][]string{
		{"acp", "-m", "script:" + script},
		{"rpc", "-m", "script:" + script},
		{"agent-client", "-m", "script:" + script},
		{"--acp", "-m", "script:" + script},
		{"-m", "script:" + script, "--acp"},
	} {
		t.Run(strings.Join(args[:1], " "), func(t *testing.T) {
			opts := testkit.Options{Args: args}
			if strings.Contains(strings.Join(args, " "), "--acp") {
				opts.Dialect = "codebuddy" // --acp implies --compat codebuddy
			}
			e := testkit.Start(t, bin, opts)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, rerr := e.Initialize(ctx, testkit.Minimal())
			if rerr != nil {
				t.Fatal(rerr)
			}
			if res.AgentInfo == nil || res.AgentInfo.Name != "corvid" {
				t.Errorf("agentInfo %+v", res.AgentInfo)
			}
			sid := e.NewSession(ctx, e.Dir())
			if stop, rerr := e.Prompt(ctx, sid, "hello"); rerr != nil || stop != "end_turn" {
				t.Errorf("prompt: %q %v", stop, rerr)
			}
		})
	}
}

func TestVersionPrintsTheVersion(t *testing.T) {
	out, err := exec.Command(testkit.BuildCorvid(t), "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "corvid ") {
		t.Fatalf("corvid version: %q %v", out, err)
	}
}
