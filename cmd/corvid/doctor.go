package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	gokeyring "github.com/zalando/go-keyring"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/conformance"
	"github.com/corvid-agent/corvid/internal/respond"
	"github.com/corvid-agent/corvid/internal/store"
)

// doctorCmd checks that this installation can work: configuration, credentials
// (their sources, never the keys), the session store, the keyring, the control
// socket directory, and the ACP conformance of this very binary.
type doctorCmd struct {
	Timeout time.Duration `name:"timeout" default:"10s" help:"Time limit for each conformance check run against this binary."`
}

func (c *doctorCmd) Run() error {
	// The store doctor checks; corvid-pg checks a PostgreSQL one.
	if target, err := config.SessionStore(config.OSEnv{}, "", config.File{}); err == nil {
		if err := handOffPostgres(target); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	cwd, _ := os.Getwd()
	// The report names what a project's config holds (providers, MCP
	// servers, tables): on a terminal shown, not obeyed (toStdout). The
	// keyboard probe writes its queries to /dev/tty, not through here.
	return toStdout(func(w io.Writer) error {
		d := doctor{env: config.OSEnv{}, cwd: cwd, self: []string{self, "acp"}, timeout: c.Timeout, out: w}
		if !d.run(ctx) {
			return errors.New("doctor found problems")
		}
		return nil
	})
}

// doctor holds what the checks need, so tests can inject an environment and binary.
type doctor struct {
	env     config.Env
	cwd     string
	self    []string // the agent command to check for conformance
	timeout time.Duration
	out     io.Writer
	failed  bool
	// keyboard asks the terminal about its keyboard protocols; nil: the
	// terminal on stdin and stdout, when there is one (doctor_tui.go).
	keyboard func() keyboardAnswer
}

// item prints one checklist line. level is "ok", "warn" or "FAIL".
func (d *doctor) item(level, name, format string, args ...any) {
	if level == "FAIL" {
		d.failed = true
	}
	fmt.Fprintf(d.out, "[%-4s] %-12s %s\n", level, name, fmt.Sprintf(format, args...))
}

// run prints the checklist and reports whether everything required passed.
func (d *doctor) run(ctx context.Context) bool {
	file, err := config.Load(d.env, d.cwd)
	switch {
	case err != nil:
		d.item("FAIL", "config", "%v", err)
	case len(file.Ignored) > 0:
		d.item("warn", "config", "loaded; untrusted project settings ignored (run `corvid trust`): %s", strings.Join(file.Ignored, ", "))
	default:
		d.configFiles()
	}

	d.credentials(file)
	if err == nil {
		d.launch(file)
		d.mcpCommands(file)
		d.tuiKeys(file)
	}
	d.shiftEnter()
	d.sessionStore()
	d.keyring()
	d.runtimeDir()
	d.conformance(ctx)
	return !d.failed
}

func (d *doctor) credentials(file *config.File) {
	providers := config.Providers
	if file != nil {
		providers = file.AllProviders()
	}
	var ready []string
	for _, st := range config.StatusOf(d.env, providers) {
		if st.Configured && st.Provider.NeedsKey {
			ready = append(ready, st.Provider.Name+" ("+st.Source+")")
		}
	}
	if len(ready) == 0 {
		d.item("warn", "credentials", "no provider has a key: `corvid auth login PROVIDER` or set its env var (scripted models need none)")
		return
	}
	d.item("ok", "credentials", "%s", strings.Join(ready, ", "))
}

// configFiles says which config files were read: none is fine (defaults),
// but "loaded" must not be claimed for a file that does not exist.
func (d *doctor) configFiles() {
	user := filepath.Join(config.ConfigDir(d.env), "config.toml")
	project := filepath.Join(d.cwd, ".corvid", "config.toml")
	var read []string
	for _, f := range []string{user, project} {
		if _, err := os.Stat(f); err == nil {
			read = append(read, f)
		}
	}
	if len(read) == 0 {
		d.item("ok", "config", "no config file; defaults apply (corvid reads %s, then .corvid/config.toml in the project)", user)
		return
	}
	d.item("ok", "config", "read %s", strings.Join(read, " and "))
}

// launch runs the checks `corvid acp` makes before it serves (preflight,
// with acp's default flags): each problem that would stop acp is a FAIL,
// each warning acp would log a warn; an area with neither is ok.
func (d *doctor) launch(file *config.File) {
	pf := (&acpCmd{}).preflight(d.env, file)
	for _, area := range []string{"model", "permissions", "sandbox"} {
		found := false
		for _, p := range pf.problems {
			if p.area == area {
				d.item("FAIL", area, "%s", p.text)
				found = true
			}
		}
		for _, w := range pf.warnings {
			if w.area == area {
				d.item("warn", area, "%s", w.text)
				found = true
			}
		}
		if !found {
			d.item("ok", area, "%s", launchSummary(d.env, file, pf, area))
		}
	}
}

// launchSummary is the ok line of a launch area: what acp will use.
func launchSummary(env config.Env, file *config.File, pf *preflight, area string) string {
	switch area {
	case "model":
		provider, model, _ := config.ResolveModel(env, file, "")
		if provider == config.ScriptProvider {
			return "script:" + model + " (the offline scripted model)"
		}
		return provider + ":" + model
	case "permissions":
		mode := string(pf.perms.Mode)
		if mode == "" {
			mode = "default"
		}
		return fmt.Sprintf("sessions start in mode %s; every rule names a known tool", mode)
	}
	return "shell sandbox " + pf.sandbox.Mode
}

// mcpCommands checks that every configured stdio MCP server's command can
// be found, the way corvid will start it.
func (d *doctor) mcpCommands(file *config.File) {
	if file == nil || len(file.MCPServers) == 0 {
		return
	}
	names := make([]string, 0, len(file.MCPServers))
	for name := range file.MCPServers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := file.MCPServers[name]
		if s.Command == "" {
			d.item("ok", "mcp "+name, "%s (remote; not contacted)", s.URL)
			continue
		}
		if path, err := exec.LookPath(s.Command); err != nil {
			d.item("FAIL", "mcp "+name, "command %q not found on PATH", s.Command)
		} else {
			d.item("ok", "mcp "+name, "%s", path)
		}
	}
}

func (d *doctor) sessionStore() {
	path, err := config.SessionStore(d.env, "", config.File{}) // CORVID_STORE, else the file
	if err != nil {
		d.item("FAIL", "sessions", "%v", err)
		return
	}
	if store.IsPostgres(path) {
		st, err := store.Open(path)
		if err != nil {
			d.item("FAIL", "sessions", "%v", err)
			return
		}
		st.Close()
		d.item("ok", "sessions", "%s opens", store.Redact(path))
		return
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		// Checking must not create it: say where it will go.
		d.item("ok", "sessions", "none stored yet; the first session creates %s", path)
		return
	}
	st, err := store.Open(path)
	if err != nil {
		d.item("FAIL", "sessions", "%v", err)
		return
	}
	if err := st.Close(); err != nil {
		d.item("FAIL", "sessions", "close %s: %v", path, err)
		return
	}
	d.item("ok", "sessions", "%s opens", path)
}

// keyring probes the OS keyring with a lookup of an entry that does not exist:
// "not found" means it answers. An unusable keyring is a warning, not a failure:
// corvid then keeps keys in auth.json (mode 0600).
func (d *doctor) keyring() {
	switch strings.ToLower(strings.TrimSpace(d.env.Getenv("CORVID_KEYRING"))) {
	case "off", "0", "false", "no":
		d.item("warn", "keyring", "disabled by CORVID_KEYRING; keys go to %s", config.AuthFile(d.env))
		return
	}
	done := make(chan error, 1)
	go func() {
		_, err := gokeyring.Get(config.KeyringService, "corvid-doctor-probe")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, gokeyring.ErrNotFound) {
			d.item("ok", "keyring", "the OS keyring answers")
			return
		}
		d.item("warn", "keyring", "unavailable (%s); keys go to %s", oneLineErr(err), config.AuthFile(d.env))
	case <-time.After(config.KeyringTimeout):
		d.item("warn", "keyring", "no answer within %s; keys go to %s", config.KeyringTimeout, config.AuthFile(d.env))
	}
}

func oneLineErr(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// runtimeDir checks the control socket directory of `corvid respond`: it
// must be creatable, a real directory (never a link), ours, private and
// writable (respond.PrepareDir).
func (d *doctor) runtimeDir() {
	p := respondPlace(d.env)
	if p.SharedTemp {
		d.item("ok", "control dir", "a fresh private directory per corvid process in %s (set XDG_RUNTIME_DIR or CORVID_HOME for a fixed one)", p.Dir)
		return
	}
	dir := p.Dir
	if err := respond.PrepareDir(dir); err != nil {
		d.item("FAIL", "control dir", "%v", err)
		return
	}
	f, err := os.CreateTemp(dir, "doctor-*")
	if err != nil {
		d.item("FAIL", "control dir", "%s is not writable: %v", dir, err)
		return
	}
	f.Close()
	os.Remove(f.Name())
	d.item("ok", "control dir", "%s", dir)
}

// conformance runs the ACP conformance kit against this binary with the scripted
// model (the kit writes its scripts into its own temporary directory).
func (d *doctor) conformance(ctx context.Context) {
	fmt.Fprintf(d.out, "[ .. ] %-12s running the protocol checks against this binary (a few seconds)…\n", "conformance")
	rep, err := conformance.Run(ctx, conformance.Options{Agent: d.self, Scripted: true, Timeout: d.timeout})
	if err != nil {
		d.item("FAIL", "conformance", "%v", err)
		return
	}
	var pass, fail, skip int
	var failed []string
	for _, r := range rep.Results {
		switch r.Status {
		case conformance.Pass:
			pass++
		case conformance.Fail:
			fail++
			failed = append(failed, fmt.Sprintf("%s (%s): %s", r.ID, r.Tier, r.Detail))
		case conformance.Skipped:
			skip++
		}
	}
	summary := fmt.Sprintf("%d passed, %d failed, %d skipped (`corvid conformance --scripted -- corvid acp` for the table)", pass, fail, skip)
	switch {
	case !rep.OK():
		d.item("FAIL", "conformance", "%s", summary)
	case fail > 0:
		d.item("warn", "conformance", "%s", summary)
	default:
		d.item("ok", "conformance", "%s", summary)
	}
	for _, f := range failed {
		fmt.Fprintf(d.out, "       %s\n", f)
	}
}
