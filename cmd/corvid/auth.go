package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/corvid-agent/corvid/internal/config"
)

// authCmd manages stored provider credentials. Its output goes to stdout:
// these commands are run by people, not by an ACP client.
type authCmd struct {
	Login  authLoginCmd  `cmd:"" help:"Store an API key for a provider (OS keyring, else auth.json with mode 0600)."`
	Logout authLogoutCmd `cmd:"" help:"Remove a provider's stored API key."`
	Status authStatusCmd `cmd:"" help:"Show which providers have credentials, and where they come from (never the keys)."`
}

type authLoginCmd struct {
	Provider string `arg:"" optional:"" help:"Provider name, e.g. anthropic, openai, gemini, openrouter (see corvid auth status); asked for when omitted."`
	Stdin    bool   `name:"stdin" help:"Read the key from standard input (for scripts; otherwise it is asked for without echo on a terminal)."`
}

type authLogoutCmd struct {
	Provider string `arg:"" help:"Provider name whose stored key to remove."`
}

type authStatusCmd struct{}

func (c *authLoginCmd) Run() error {
	cwd, _ := os.Getwd()
	provider := c.Provider
	if provider == "" {
		if c.Stdin {
			return errors.New("name the provider when reading the key from stdin: corvid auth login PROVIDER --stdin")
		}
		provider = askProvider(os.Stdin, os.Stderr)
	}
	return runLogin(config.OSEnv{}, cwd, provider, c.Stdin, os.Stdin, os.Stdout, os.Stderr)
}

// askProvider asks which provider to log in to (default anthropic).
func askProvider(in io.Reader, out io.Writer) string {
	fmt.Fprint(out, "Provider (anthropic, openai, gemini, openrouter, …) [anthropic]: ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	if p := strings.TrimSpace(line); p != "" {
		return p
	}
	return "anthropic"
}

func (c *authLogoutCmd) Run() error {
	cwd, _ := os.Getwd()
	return runLogout(config.OSEnv{}, cwd, c.Provider, os.Stdout)
}

func (c *authStatusCmd) Run() error {
	cwd, _ := os.Getwd()
	return runStatus(config.OSEnv{}, cwd, os.Stdout)
}

// loadProvider finds a built-in or config-defined provider by name.
func loadProvider(env config.Env, cwd, name string) (config.Provider, *config.File, error) {
	file, err := config.Load(env, cwd)
	if err != nil {
		return config.Provider{}, nil, err
	}
	p, ok := file.Provider(name)
	if !ok {
		var names []string
		for _, p := range file.AllProviders() {
			names = append(names, p.Name)
		}
		return config.Provider{}, nil, fmt.Errorf("unknown provider %q (known: %s)", name, strings.Join(names, ", "))
	}
	return p, file, nil
}

func runLogin(env config.Env, cwd, provider string, fromStdin bool, stdin *os.File, stdout, stderr io.Writer) error {
	p, _, err := loadProvider(env, cwd, provider)
	if err != nil {
		return err
	}
	var key string
	switch {
	case fromStdin:
		key, err = readKey(stdin)
	case term.IsTerminal(int(stdin.Fd())):
		fmt.Fprintf(stderr, "%s API key (input hidden): ", p.DisplayName())
		var b []byte
		b, err = term.ReadPassword(int(stdin.Fd()))
		fmt.Fprintln(stderr)
		key = string(b)
	default:
		return errors.New("standard input is not a terminal; pass --stdin to read the key from it")
	}
	if err != nil {
		return fmt.Errorf("read key: %w", err)
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return errors.New("no key given")
	}
	where, err := config.Login(env, p.Name, key)
	if err != nil {
		return err
	}
	if path, ok := strings.CutPrefix(where, "file:"); ok {
		fmt.Fprintf(stdout, "Saved the %s key in %s (readable only by you; the OS keyring is unavailable).\n", p.DisplayName(), path)
	} else {
		fmt.Fprintf(stdout, "Saved the %s key in the OS keyring.\n", p.DisplayName())
	}
	if _, src := config.Credential(env, p); strings.HasPrefix(src, "env:") {
		fmt.Fprintf(stdout, "Note: %s is set in the environment and takes precedence over the stored key.\n", strings.TrimPrefix(src, "env:"))
	}
	return nil
}

// readKey reads the first line of r (a key never spans lines).
func readKey(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return line, nil
}

func runLogout(env config.Env, cwd, provider string, stdout io.Writer) error {
	p, _, err := loadProvider(env, cwd, provider)
	if err != nil {
		return err
	}
	removed, err := config.Logout(env, p.Name)
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		fmt.Fprintf(stdout, "No stored %s key.\n", p.DisplayName())
	}
	for _, w := range removed {
		if path, ok := strings.CutPrefix(w, "file:"); ok {
			fmt.Fprintf(stdout, "Removed the %s key from %s.\n", p.DisplayName(), path)
		} else {
			fmt.Fprintf(stdout, "Removed the %s key from the OS keyring.\n", p.DisplayName())
		}
	}
	if _, src := config.Credential(env, p); strings.HasPrefix(src, "env:") {
		fmt.Fprintf(stdout, "Note: %s is still set in the environment.\n", strings.TrimPrefix(src, "env:"))
	}
	return nil
}

func runStatus(env config.Env, cwd string, stdout io.Writer) error {
	file, err := config.Load(env, cwd)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tSTATUS\tSOURCE")
	for _, st := range config.StatusOf(env, file.AllProviders()) {
		p := st.Provider
		status, source := "ready", st.Source
		switch {
		case !st.Configured:
			status = "no key"
			source = "set " + strings.Join(p.KeyVars, " or ") + ", or run `corvid auth login " + p.Name + "`"
		case !p.NeedsKey && st.Source == "none needed":
			status, source = "local", "no key needed ("+st.BaseURL+")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, status, source)
	}
	return tw.Flush()
}
