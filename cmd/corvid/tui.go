package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"golang.org/x/term"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/tuiargs"
)

// tuiCmd is `corvid tui`, and bare `corvid` in a terminal. The chat is a
// program of its own, corvid-tui, installed beside corvid: the terminal UI
// library it links would otherwise initialise, and its pages load, on
// every start of `corvid acp` (ARCHITECTURE.md §6). This command only
// finds it and hands it the terminal.
type tuiCmd struct {
	tuiargs.Flags `embed:""`
}

func (c *tuiCmd) Help() string { return tuiargs.Help }

func (c *tuiCmd) Run() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if !interactive() {
		return errors.New("corvid tui needs a terminal on stdin and stdout; for scripts use corvid run -p PROMPT")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find corvid's own executable: %w", err)
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	ui, err := findTUI(self)
	if err != nil {
		return err
	}
	c.useConfig(configTUI())
	if c.Connect == "auto" {
		c.ConnectLabel = "auto: unix:" + config.ServeSocket(config.OSEnv{})
	}
	return execTUI(ui, append([]string{"--corvid", self}, c.Forward()...))
}

// findTUI finds corvid-tui beside corvid, else on PATH.
func findTUI(self string) (string, error) {
	if p, ok := findBeside(self, "corvid-tui"); ok {
		return p, nil
	}
	return "", fmt.Errorf("the terminal UI, corvid-tui, is not installed beside %s or on PATH: install it from the same release archive, or with go install github.com/corvid-agent/corvid/cmd/corvid-tui@latest", self)
}

// findBeside finds the program name (name.exe on Windows) in self's
// directory, else on PATH.
func findBeside(self, name string) (string, bool) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	beside := filepath.Join(filepath.Dir(self), name)
	if st, err := os.Stat(beside); err == nil && !st.IsDir() {
		return beside, true
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	return "", false
}

// interactive reports whether stdin and stdout are both terminals.
func interactive() bool {
	return term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
}

// useConfig adds the [tui] table's key bindings (before the flags', which
// win) and its theme, unless --theme names one.
func (c *tuiCmd) useConfig(keys []string, theme string) {
	c.Keys = append(keys, c.Keys...)
	if c.Theme == "" {
		c.Theme = theme
	}
}

// configTUI is the [tui] table of the user config as flags for
// corvid-tui (which does not read config.toml): the [tui.keys] bindings,
// and the theme ("" for auto). A config that does not load is the agent's
// to report; the TUI then has its default keys and asks the terminal.
func configTUI() ([]string, string) {
	cwd, _ := os.Getwd()
	f, err := config.Load(config.OSEnv{}, cwd)
	if err != nil {
		return nil, ""
	}
	keys, _ := f.TUIKeys() // corvid doctor reports what is wrong
	return tuiargs.KeyFlags(keys), f.TUITheme()
}
