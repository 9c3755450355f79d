// Package tuiargs holds the flags of the terminal UI, shared by `corvid
// tui` (which only forwards them) and the corvid-tui program (which runs
// the UI). It is its own package so that the corvid binary does not link
// the UI: see internal/tui's doc and ARCHITECTURE.md §6.
package tuiargs

import (
	"errors"
	"fmt"
	"strings"
)

// Flags are those of `corvid acp` and `corvid run` that apply to the TUI,
// and its own. The struct tags are kong's.
type Flags struct {
	Model        string   `short:"m" name:"model" placeholder:"PROVIDER:MODEL" help:"Model, as provider:model (e.g. script:examples/hello.json). Default: config, CORVID_MODEL, or the first provider with credentials."`
	Agent        string   `name:"agent" placeholder:"NAME|PATH" help:"Agent profile, as for corvid acp."`
	Yolo         bool     `name:"yolo" help:"Run every tool call without asking (configured denies still apply)."`
	Allow        []string `name:"allow" sep:"none" placeholder:"RULE" help:"Run what this rule names without asking (repeatable), e.g. --allow write."`
	Sandbox      string   `name:"sandbox" placeholder:"MODE" help:"Confine shell commands: off, workspace-write or read-only."`
	Continue     bool     `name:"continue" short:"c" help:"Open the newest stored session of this directory, with its transcript."`
	Resume       string   `name:"resume" short:"r" placeholder:"ID" help:"Open the stored session ID, with its transcript."`
	Theme        string   `name:"theme" enum:",auto,light,dark" default:"" placeholder:"auto|light|dark" help:"Colours for a light or dark terminal, or auto: ask the terminal. Default: [tui] theme of config.toml, else auto."`
	Connect      string   `name:"connect" placeholder:"URL|unix:PATH|auto" help:"Attach to the daemon (corvid serve) at this endpoint instead of starting an agent: ws://HOST:PORT/acp, http://…, unix:PATH, or auto (the default socket; starts the daemon if none answers)."`
	Session      string   `name:"session" placeholder:"ID" help:"With --connect: join this session of the daemon (its transcript, then live), which an editor or the dashboard may be driving too."`
	TokenFile    string   `name:"connect-token-file" placeholder:"FILE" help:"With --connect: the daemon's bearer token, read from this file."`
	ConnectLabel string   `name:"connect-label" hidden:"" help:"How the status line names the --connect endpoint (corvid passes the socket auto stands for)."`
	Keys         []string `name:"key" hidden:"" sep:"none" placeholder:"ACTION=KEYS" help:"A key binding of [tui.keys] (corvid passes them from config.toml)."`
	Command      []string `arg:"" optional:"" passthrough:"" placeholder:"-- CMD ARGS" help:"Drive this ACP agent on its stdio instead of corvid acp: corvid tui -- CMD ARGS…"`
}

// Help is what `corvid tui --help` says beyond the flags, including what
// is not built.
const Help = `Opens a chat in this terminal (bare corvid in a terminal does the same). The chat is the corvid-tui program, installed beside corvid: it runs "corvid acp" as a child process and speaks the Agent Client Protocol to it, as an editor does. Finished output goes to the terminal's own scrollback. Keys: docs/tui.md, or /help inside.

"corvid tui -- CMD ARGS…" drives any other ACP agent on stdio instead (the agent flags -m, --agent, --yolo, --allow and --sandbox are corvid's and do not apply to it).

"corvid tui --connect URL|unix:PATH|auto [--session ID]" attaches to the daemon (corvid serve): a new session there, or with --session a session an editor or the dashboard may be driving too (its transcript, then live). A permission question goes to every client attached; the first answer wins. The status line names the endpoint; a dropped connection is shown and reconnected. With auto, -m, --agent, --yolo, --allow and --sandbox are passed to a daemon it starts; otherwise the daemon's own apply.`

// Validate refuses contradictory flags.
func (f *Flags) Validate() error {
	if f.Resume != "" && f.Continue {
		return errors.New("--continue and --resume cannot be used together")
	}
	if len(f.Command) > 0 && f.Command[0] == "--" {
		f.Command = f.Command[1:]
	}
	if f.Connect != "" && !validEndpoint(f.Connect) {
		return fmt.Errorf("--connect %q: want auto, unix:PATH, ws://HOST:PORT/acp or http://HOST:PORT/acp", f.Connect)
	}
	if f.Session != "" && f.Connect == "" {
		return errors.New("--session needs --connect: it names a session of the daemon")
	}
	if f.TokenFile != "" && f.Connect == "" {
		return errors.New("--connect-token-file needs --connect")
	}
	if f.Connect != "" && (len(f.Command) > 0 || f.Resume != "" || (f.Continue && f.Session != "")) {
		return errors.New("--connect attaches to the daemon: it does not go with -- CMD, --resume (use --session) or --continue with --session")
	}
	if len(f.Command) > 0 && (f.Model != "" || f.Agent != "" || f.Yolo || len(f.Allow) > 0 || f.Sandbox != "") {
		return errors.New("-m, --agent, --yolo, --allow and --sandbox are corvid's: they do not apply to another agent (corvid tui -- CMD)")
	}
	return nil
}

// validEndpoint tells whether --connect names something the relay
// (`corvid acp --connect`) can reach: a TUI would otherwise retry a typo
// forever.
func validEndpoint(e string) bool {
	if e == "auto" || (strings.HasPrefix(e, "unix:") && len(e) > len("unix:")) {
		return true
	}
	for _, p := range []string{"ws://", "wss://", "http://", "https://"} {
		if strings.HasPrefix(e, p) && len(e) > len(p) {
			return true
		}
	}
	return false
}

// Forward is f as arguments again, for corvid-tui.
func (f *Flags) Forward() []string {
	args := f.agentArgs(nil)
	if f.Continue {
		args = append(args, "--continue")
	}
	if f.Resume != "" {
		args = append(args, "--resume", f.Resume)
	}
	if f.Theme != "" {
		args = append(args, "--theme", f.Theme)
	}
	if f.Connect != "" {
		args = append(args, "--connect", f.Connect)
	}
	if f.Session != "" {
		args = append(args, "--session", f.Session)
	}
	if f.TokenFile != "" {
		args = append(args, "--connect-token-file", f.TokenFile)
	}
	if f.ConnectLabel != "" {
		args = append(args, "--connect-label", f.ConnectLabel)
	}
	for _, k := range f.Keys {
		args = append(args, "--key", k)
	}
	if len(f.Command) > 0 {
		args = append(append(args, "--"), f.Command...)
	}
	return args
}

// ACPArgs are the arguments of the child `corvid acp`: the agent itself,
// or with --connect the relay to the daemon.
func (f *Flags) ACPArgs() []string {
	args := f.agentArgs([]string{"acp", "--log-level", "warn"})
	if f.Connect != "" {
		args = append(args, "--connect", f.Connect)
		if f.TokenFile != "" {
			args = append(args, "--connect-token-file", f.TokenFile)
		}
	}
	return args
}

// agentArgs appends the agent's flags to args.
func (f *Flags) agentArgs(args []string) []string {
	if f.Model != "" {
		args = append(args, "--model", f.Model)
	}
	if f.Agent != "" {
		args = append(args, "--agent", f.Agent)
	}
	if f.Yolo {
		args = append(args, "--yolo")
	}
	for _, a := range f.Allow {
		args = append(args, "--allow", a)
	}
	if f.Sandbox != "" {
		args = append(args, "--sandbox", f.Sandbox)
	}
	return args
}

// TerminalTheme is --theme as the TUI takes it: "light", "dark", or ""
// (ask the terminal) for auto or none.
func (f *Flags) TerminalTheme() string {
	if f.Theme == "auto" {
		return ""
	}
	return f.Theme
}
