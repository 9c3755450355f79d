// Command corvid-tui is corvid's terminal UI: `corvid tui`, and bare
// `corvid` in a terminal, run it. It is an ACP client: it runs `corvid
// acp` as a child process and speaks the protocol to it, as an editor
// does. It is a program of its own so that the corvid binary, which
// editors start for every session, does not link the terminal UI library
// (ARCHITECTURE.md §6).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/alecthomas/kong"
	"golang.org/x/term"

	"github.com/corvid-agent/corvid/internal/tui"
	"github.com/corvid-agent/corvid/internal/tuiargs"
)

type cli struct {
	tuiargs.Flags `embed:""`
	Corvid        string `name:"corvid" placeholder:"PATH" help:"The corvid executable to run as the agent (default: beside corvid-tui, else on PATH)."`
}

func main() {
	var c cli
	kong.Parse(&c, kong.Name("corvid-tui"), kong.Description(tuiargs.Help), kong.UsageOnError())
	if err := run(&c); err != nil {
		fmt.Fprintln(os.Stderr, "corvid-tui:", err)
		os.Exit(1)
	}
}

func run(c *cli) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return errors.New("corvid-tui needs a terminal on stdin and stdout; for scripts use corvid run -p PROMPT")
	}
	agent, label, endpoint := c.Command, "", ""
	if len(agent) > 0 {
		label = filepath.Base(agent[0])
	} else {
		corvid := c.Corvid
		if corvid == "" {
			var err error
			if corvid, err = findCorvid(); err != nil {
				return err
			}
		}
		agent, label = append([]string{corvid}, c.ACPArgs()...), c.Model
		endpoint = c.Connect
		if c.ConnectLabel != "" {
			endpoint = c.ConnectLabel
		}
	}
	resume := c.Resume
	if c.Connect != "" {
		resume = c.Session
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	keys, problems := tuiargs.Keymap(tuiargs.ParseKeyFlags(c.Keys))
	return tui.Run(tui.Options{
		Keys:       keys,
		Notes:      problems,
		Agent:      agent,
		Cwd:        cwd,
		Continue:   c.Continue,
		Resume:     resume,
		Endpoint:   endpoint,
		ModelLabel: label,
		LoginHint:  loginHint(c),
		Theme:      c.TerminalTheme(),
		NoColor:    os.Getenv("NO_COLOR") != "",
	})
}

func findCorvid() (string, error) {
	name := "corvid"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), name)
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", errors.New("corvid is not installed beside corvid-tui or on PATH (or name it with --corvid PATH)")
	}
	return p, nil
}

// loginHint is what a user without a provider key is told: how to store
// one, or how to talk to corvid's scripted model without any.
func loginHint(c *cli) string {
	if len(c.Command) > 0 || c.Connect != "" {
		return ""
	}
	return "corvid auth login stores a provider key. To try corvid without one: corvid tui -m script:examples/hello.json (a scripted model, from corvid's repository)."
}
