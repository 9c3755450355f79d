// Command corvid is a coding agent. Its first interface is the Agent Client
// Protocol: editors run `corvid acp` and speak JSON-RPC over its stdio.
//
// This package is CLI wiring only (kong); the work happens in internal/.
package main

import (
	// First: grows the main goroutine's stack before package init runs
	// (see the package's doc; issue 18, idle memory).
	_ "github.com/corvid-agent/corvid/internal/stackstart"
	// Then, as soon as syscall is initialised: the relay to a daemon, run
	// before the packages it does not use are (issue 30; its doc).
	_ "github.com/corvid-agent/corvid/internal/fastrelay"

	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/providers"
)

// version, commit and date are stamped in by release builds:
// -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
// A plain `go build` leaves them empty or "dev", and versionLine falls back
// to what the Go toolchain recorded (the VCS revision and time).
var (
	version = "0.1.0-dev"
	commit  = ""
	date    = ""
)

// versionLine is what `corvid version` and `corvid --version` print.
func versionLine() string {
	var settings []debug.BuildSetting
	if info, ok := debug.ReadBuildInfo(); ok {
		settings = info.Settings
	}
	return formatVersion(version, commit, date, settings)
}

// formatVersion names each time for what it is: a release build stamps the
// time it was built ("built …"); a plain `go build` has only the time of
// the commit it was built from, which the toolchain recorded ("committed …").
func formatVersion(version, commit, date string, settings []debug.BuildSetting) string {
	c, when, dirty := commit, "built "+date, false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			if c == "" {
				c = s.Value
			}
		case "vcs.time":
			if date == "" {
				when = "committed " + s.Value
			}
		case "vcs.modified":
			dirty = s.Value == "true" && commit == ""
		}
	}
	if len(c) > 12 {
		c = c[:12]
	}
	if c == "" {
		c = "unknown"
	}
	if dirty {
		c += "-dirty"
	}
	if when == "built " {
		when = "built at an unknown time"
	}
	return fmt.Sprintf("corvid %s (commit %s, %s)", version, c, when)
}

// CLI is the command tree.
type CLI struct {
	ACP         acpCmd           `cmd:"" aliases:"rpc,agent-client" help:"Serve the Agent Client Protocol on stdin/stdout (what editors run). Aliases: rpc, agent-client; also corvid --acp."`
	Serve       serveCmd         `cmd:"" help:"Run the daemon that owns sessions and serves ACP to many clients: unix socket (NDJSON), Streamable HTTP and WebSocket (docs/serve.md)."`
	Agents      agentsCmd        `cmd:"" help:"List and show agent profiles (corvid TOML profiles and Leviath agent.leviath blueprints)."`
	Run         runCmd           `cmd:"" help:"Print mode: answer one prompt on stdout and exit: corvid run -p PROMPT (also corvid -p PROMPT)."`
	Auth        authCmd          `cmd:"" help:"Manage provider credentials (login, logout, status)."`
	Models      modelsCmd        `cmd:"" help:"List the models usable with the credentials at hand."`
	Import      importCmd        `cmd:"" help:"Copy another agent's settings into corvid's config: corvid import kage."`
	Trust       trustCmd         `cmd:"" help:"Trust this project's .corvid/config.toml (it may then loosen permissions and add MCP servers) and its agent files (their seed commands may then run), as they are now."`
	Respond     respondCmd       `cmd:"" help:"List or answer permission questions that corvid could not put to its host."`
	Sessions    sessionsCmd      `cmd:"" help:"List, show, export or remove stored sessions."`
	Store       storeCmd         `cmd:"" help:"Manage session stores: corvid store migrate --from sqlite:PATH --to postgres://USER@HOST/DB."`
	Conformance conformanceCmd   `cmd:"" help:"Check any ACP agent command against the protocol: corvid conformance [--scripted] -- AGENT [ARGS]."`
	Doctor      doctorCmd        `cmd:"" help:"Check config, credentials (sources only), the session store, the keyring, and run the conformance kit against corvid."`
	Completion  completionCmd    `cmd:"" help:"Print a shell completion script: corvid completion bash|zsh|fish."`
	TUI         tuiCmd           `cmd:"" name:"tui" help:"Chat in this terminal (also bare corvid in a terminal): an ACP client running corvid acp, another ACP agent (-- CMD), or attached to corvid serve (--connect)."`
	Version     versionCmd       `cmd:"" help:"Print corvid's version, commit and build date."`
	VersionFlag kong.VersionFlag `name:"version" short:"v" help:"Print corvid's version, commit and build date."`
	SandboxExec sandboxExecCmd   `cmd:"" name:"sandbox-exec" hidden:"" help:"Run a command confined by the shell sandbox (what the shell tool runs)."`
}

// acpCLI is the command tree when the first word is acp or one of its
// aliases, which is how editors launch corvid: kong builds its model of
// every command and flag by reflection before it parses, and for the whole
// CLI that was the largest part of the time to the first frame. The acp
// command is the same struct, so its flags, help and errors are the same.
type acpCLI struct {
	ACP         acpCmd           `cmd:"" aliases:"rpc,agent-client" help:"Serve the Agent Client Protocol on stdin/stdout (what editors run). Aliases: rpc, agent-client; also corvid --acp."`
	VersionFlag kong.VersionFlag `name:"version" short:"v" help:"Print corvid's version, commit and build date."`
}

// cliFor returns the command tree to parse args with.
func cliFor(args []string) any {
	if len(args) > 0 && (args[0] == "acp" || args[0] == "rpc" || args[0] == "agent-client") {
		return &acpCLI{}
	}
	return &CLI{}
}

type versionCmd struct{}

func (versionCmd) Run() error {
	fmt.Println(versionLine())
	return nil
}

func main() {
	providers.Register(llm.Default)
	args := os.Args[1:]
	if len(args) == 0 && interactive() {
		// Bare corvid in a terminal opens the chat; without one (a pipe,
		// CI) it prints its usage, so scripts keep working.
		args = []string{"tui"}
	}
	args = helpArgs(printModeArgs(acpFlagArgs(args)))
	if c, ok := parseACPArgs(args); ok {
		// How editors launch corvid, read without building kong's model
		// (see parseACPArgs); kong would run the same Run.
		c.kage = args[0] == "rpc"
		if err := c.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "corvid:", err)
			os.Exit(1)
		}
		return
	}
	cli := cliFor(args)
	if a, ok := cli.(*acpCLI); ok {
		a.ACP.kage = args[0] == "rpc" // cliFor picked acpCLI by the first word
	}
	parser, err := kong.New(cli,
		kong.Name("corvid"),
		kong.Description("corvid — a coding agent for editors that speak the Agent Client Protocol."),
		kong.UsageOnError(),
		kong.Vars{"version": versionLine()},
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

// acpFlagArgs makes CodeBuddy's habit, `corvid --acp [flags]`, mean
// `corvid acp [flags]`. A --acp after "--" belongs to another command
// (`corvid conformance -- gemini --acp`) and is left alone.
func acpFlagArgs(args []string) []string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == "--acp" {
			// CodeBuddy hosts launch `codebuddy --acp`: its dialect too,
			// unless a --compat is given.
			out := append([]string{"acp"}, append(append([]string{}, args[:i]...), args[i+1:]...)...)
			for _, b := range out {
				if b == "--" {
					break
				}
				if b == "--compat" || strings.HasPrefix(b, "--compat=") {
					return out
				}
			}
			return append(out, "--compat", "codebuddy")
		}
	}
	return args
}

// helpArgs makes a bare `corvid`, `corvid help` and `corvid help CMD…`
// print usage (of CMD) like --help does.
func helpArgs(args []string) []string {
	switch {
	case len(args) == 0:
		return []string{"--help"}
	case args[0] == "help":
		return append(append([]string{}, args[1:]...), "--help")
	}
	return args
}

// printModeArgs makes `corvid [flags] -p PROMPT …` mean `corvid run -p
// PROMPT …`: a -p/--print met before any command word (and before "--",
// after which words belong to another program) selects print mode.
func printModeArgs(args []string) []string {
	for _, a := range args {
		switch {
		case a == "--":
			return args
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
	"trust": true, "respond": true, "sessions": true, "conformance": true, "doctor": true, "version": true, "help": true, "completion": true,
	"import": true, "sandbox-exec": true, "store": true, "serve": true, "tui": true,
}
