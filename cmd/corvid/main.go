// Command corvid is a coding agent. Its first interface is the Agent Client
// Protocol: editors run `corvid acp` and speak JSON-RPC over its stdio.
//
// This package is CLI wiring only (kong); the work happens in internal/.
package main

import (
	"fmt"
	"os"

	"github.com/alecthomas/kong"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/providers"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// CLI is the command tree.
type CLI struct {
	ACP         acpCmd         `cmd:"" aliases:"rpc,agent-client" help:"Serve the Agent Client Protocol on stdin/stdout (what editors run). Aliases: rpc, agent-client; also corvid --acp."`
	Agents      agentsCmd      `cmd:"" help:"List and show agent profiles (corvid TOML profiles and Leviath agent.leviath blueprints)."`
	Run         runCmd         `cmd:"" help:"Print mode: answer one prompt on stdout and exit: corvid run -p PROMPT (also corvid -p PROMPT)."`
	Auth        authCmd        `cmd:"" help:"Manage provider credentials (login, logout, status)."`
	Models      modelsCmd      `cmd:"" help:"List the models usable with the credentials at hand."`
	Trust       trustCmd       `cmd:"" help:"Trust this project's .corvid/config.toml (it may then loosen permissions and add MCP servers)."`
	Respond     respondCmd     `cmd:"" help:"List or answer permission questions that corvid could not put to its host."`
	Sessions    sessionsCmd    `cmd:"" help:"List, show, export or remove stored sessions."`
	Conformance conformanceCmd `cmd:"" help:"Check any ACP agent command against the protocol: corvid conformance [--scripted] -- AGENT [ARGS]."`
	Doctor      doctorCmd      `cmd:"" help:"Check config, credentials (sources only), the session store, the keyring, and run the conformance kit against corvid."`
	Version     versionCmd     `cmd:"" help:"Print corvid's version."`
	SandboxExec sandboxExecCmd `cmd:"" name:"sandbox-exec" hidden:"" help:"Run a command confined by the shell sandbox (what the shell tool runs)."`
}

type versionCmd struct{}

func (versionCmd) Run() error {
	fmt.Println("corvid", version)
	return nil
}

func main() {
	providers.Register(llm.Default)
	args := os.Args[1:]
	// CodeBuddy's habit: `corvid --acp [flags]` is `corvid acp [flags]`.
	for i, a := range args {
		if a == "--acp" {
			args = append([]string{"acp"}, append(append([]string{}, args[:i]...), args[i+1:]...)...)
			break
		}
	}
	args = printModeArgs(args)
	var cli CLI
	parser, err := kong.New(&cli,
		kong.Name("corvid"),
		kong.Description("corvid — a coding agent for editors that speak the Agent Client Protocol."),
		kong.UsageOnError(),
		kong.Vars{"version": version},
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corvid:", err)
		os.Exit(2)
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		// Usage errors go to stderr: stdout may belong to the protocol.
		fmt.Fprintln(os.Stderr, "corvid:", err)
		os.Exit(2)
	}
	if err := kctx.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "corvid:", err)
		os.Exit(1)
	}
}

// printModeArgs makes `corvid [flags] -p PROMPT …` mean `corvid run -p
// PROMPT …`: a -p/--print met before any command word selects print mode.
func printModeArgs(args []string) []string {
	for _, a := range args {
		switch {
		case a == "-p" || a == "--print":
			return append([]string{"run"}, args...)
		case commandWords[a]:
			return args
		}
	}
	return args
}

// commandWords are the command names and aliases of CLI.
var commandWords = map[string]bool{
	"acp": true, "rpc": true, "agent-client": true, "agents": true, "run": true, "auth": true, "models": true,
	"trust": true, "respond": true, "sessions": true, "conformance": true, "doctor": true, "version": true, "help": true,
}
