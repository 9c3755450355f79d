package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/corvid-agent/corvid/internal/llm/catalog"

	"github.com/corvid-agent/corvid/internal/acpserver"
	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/providers"
	"github.com/corvid-agent/corvid/internal/mcp"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/reaper"
	"github.com/corvid-agent/corvid/internal/tool"
)

type acpCmd struct {
	Model                 string       `short:"m" name:"model" placeholder:"PROVIDER:MODEL" help:"Model for every session of this connection, as provider:model or provider/model (e.g. anthropic:claude-sonnet-4-6, script:examples/hello.json). Default: config, CORVID_MODEL, or the first provider with credentials."`
	System                string       `name:"system" placeholder:"TEXT" help:"Replace the system prompt with TEXT."`
	LogFile               string       `name:"log-file" placeholder:"PATH" help:"Write logs to PATH instead of stderr."`
	LogLevel              string       `name:"log-level" default:"info" help:"Log level: trace (also whole model requests), debug (each model request, its sizes and end), info, warn or error."`
	Yolo                  bool         `name:"yolo" help:"Run every tool call without asking (configured denies still apply)."`
	Mode                  string       `name:"mode" placeholder:"MODE" help:"Permission mode new sessions start in: ask (every tool asks), default, edit, plan, yolo or deny (every tool refused); kage's allow means yolo. Default: default_mode in config, else default."`
	Sandbox               string       `name:"sandbox" placeholder:"MODE" help:"Confine shell commands with Landlock (Linux): off, workspace-write (writes only in the session's directories and the temp dir) or read-only. Default: sandbox in config, else off."`
	SandboxNetwork        bool         `name:"sandbox-network" help:"Let sandboxed shell commands use the network (TCP); off by default."`
	Allow                 []string     `name:"allow" sep:"none" placeholder:"RULE" help:"Run what this rule names without asking (repeatable; commas are part of the rule), e.g. --allow write or --allow 'shell(go test*)'."`
	MaxLineBytes          int          `name:"max-line-bytes" default:"67108864" help:"Largest inbound JSON-RPC line accepted, in bytes."`
	ClientTools           string       `name:"client-tools" enum:",auto,never" default:"" help:"auto: read/write files and run shell through the editor when it advertises fs/terminal support; never: always in-process. Default: auto (never when launched as corvid rpc, kage's line)."`
	NoProjectInstructions bool         `name:"no-project-instructions" help:"Leave AGENTS.md files (and CODEBUDDY.md, CLAUDE.md, GEMINI.md) out of the system prompt."`
	Login                 bool         `name:"login" help:"Log in interactively (store a provider's API key) and exit; what editors run for ACP terminal authentication."`
	Compat                string       `name:"compat" placeholder:"DIALECT" enum:",codebuddy" default:"" help:"Speak a host's dialect beside ACP v1: codebuddy adds CodeBuddy's root-level capability flags and session_end updates (docs/codebuddy.md). corvid --acp implies it."`
	Multitask             bool         `name:"multitask" help:"Refused with acp: multitask is a per-session option (the multitask config option or session/set_multitask); see docs/codebuddy.md."`
	Profile               profileFlags `embed:""`
	StoreFlag             storeFlag    `embed:""`
	// The relay (relay.go): with --connect, acp carries stdio to a
	// running `corvid serve` and starts no agent of its own.
	Connect          string `name:"connect" placeholder:"unix:PATH|URL" help:"Relay stdin/stdout to a running corvid serve instead of running the agent here: unix:PATH (its socket) or ws://HOST:PORT/acp (http:// works too). The agent flags are the daemon's, not this process's."`
	ConnectTokenFile string `name:"connect-token-file" placeholder:"FILE" help:"With --connect to a URL: send the bearer token in FILE."`

	// kage is set by main when the command word was rpc, kage's launch
	// line: kage never auto-approves and never asks for the client's fs or
	// terminal, so those are this alias's defaults (kageDefaults).
	kage bool
	// userConfig, when set (serve), is the content of the user's
	// config.toml as last read (servereload.go); nil: read the file each
	// time (acp).
	userConfig *userConfig
}

// kageDefaults fills in what a flag left unset with the defaults of the
// command word corvid was launched with: for `corvid rpc` (kage's line),
// tools run in-process (--client-tools never) and sessions start in ask
// mode unless --mode, --yolo or default_mode in config says otherwise
// (permissions); for acp and agent-client, auto.
func (c *acpCmd) kageDefaults() {
	if c.ClientTools == "" {
		c.ClientTools = "auto"
		if c.kage {
			c.ClientTools = "never"
		}
	}
}

func (c *acpCmd) Run() error {
	c.kageDefaults()
	if c.Login {
		return c.login()
	}
	if c.Connect != "" {
		return c.relay()
	}
	if c.Multitask || c.Profile.Agent == "multitask" {
		// CodeBuddy's entry guard (C41): multitask is a session overlay.
		return errors.New("--multitask and --agent multitask cannot be used with acp: multitask is set per session, with the multitask config option (session/set_config_option), session/set_multitask or /multitask; see docs/codebuddy.md")
	}
	if term.IsTerminal(int(os.Stdin.Fd())) {
		// Someone typed `corvid acp` in a terminal: what they type next
		// would only earn -32700 frames, so say what this is for.
		fmt.Fprintln(os.Stderr, terminalNotice)
	}
	survivePipes()
	// stdout belongs to the protocol. Keep the real stdout for frames and
	// point both os.Stdout and fd 1 at stderr before anything else runs, so
	// a stray print (ours, a library's or a child's) cannot corrupt it.
	protoOut, err := claimStdout()
	if err != nil {
		return fmt.Errorf("claim stdout: %w", err)
	}
	logger, closeLog, err := newLogger(c.LogFile, c.LogLevel)
	if err != nil {
		return err
	}
	defer closeLog()
	slog.SetDefault(logger)
	// Before any child starts: what corvid starts stays below it even when
	// it detaches, so the control socket can refuse it (issue 35).
	if err := reaper.Adopt(logger); err != nil {
		level := slog.LevelWarn
		if runtime.GOOS != "linux" {
			level = slog.LevelDebug // expected there: docs/security.md
		}
		logger.Log(context.Background(), level, "processes that detach from corvid's commands can answer its out-of-band questions", "err", err)
	}

	ag, opts := c.wire(logger)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupt := make(chan struct{}, 1)
	stopSignals := watchSignals(logger, interrupt, func() {
		// Ending the input ends Serve the same way an editor closing
		// stdin does: turns are cancelled and answered, then we exit.
		_ = os.Stdin.Close()
		cancel()
	}, shutdownLimit, func() { stuckShutdown(logger) })
	defer stopSignals()

	opts.Interrupt = interrupt
	err = acpserver.Serve(ctx, os.Stdin, protoOut, opts)
	if err := ag.Close(); err != nil {
		logger.Error("close session store", "err", err)
	}
	if err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, context.Canceled) {
		logger.Warn("connection ended", "err", err)
	}
	return nil
}

// wire builds the agent and the protocol handler's options from the flags:
// what `corvid acp` serves on stdio and `corvid serve` on every connection.
// A bad flag or config exits 1, as before serving anything.
func (c *acpCmd) wire(logger *slog.Logger) (*agent.Agent, acpserver.Options) {
	// corvid reads its environment through a snapshot; the process
	// environment, which every child inherits, loses the provider keys and
	// CORVID_* settings (unless pass_env lists them).
	env := config.SnapshotEnv()
	cwd, _ := os.Getwd()
	file, err := c.loadConfig(env, cwd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corvid:", err)
		os.Exit(1)
	}
	// Before the environment is scrubbed: a PostgreSQL store may hand the
	// command to corvid-pg (pghandoff.go), which needs it whole.
	storeTarget, err := c.StoreFlag.target(env, file)
	if err == nil {
		err = handOffPostgres(storeTarget)
	}
	if err != nil {
		exitStoreError(err)
	}
	providers.RegisterModels(file) // [providers.NAME.models] join the catalog
	var profileCfg agent.Config
	if err := c.Profile.applyProfile(env, file, &c.Model, &c.System, logger, &profileCfg); err != nil {
		fmt.Fprintln(os.Stderr, "corvid:", err)
		os.Exit(1)
	}
	secrets := withholdSecrets(env, file, logger)
	pf := c.preflight(env, file)
	if len(pf.problems) > 0 {
		fmt.Fprintln(os.Stderr, "corvid:", pf.problems[0].text)
		os.Exit(1)
	}
	for _, w := range pf.warnings {
		logger.Warn(w.text)
	}
	model, noModel, perms := pf.model, pf.noModel, pf.perms
	if err := checkStore(storeTarget); err != nil {
		exitStoreError(err)
	}
	ag := agent.New(agent.Config{
		Model:                 model,
		Tools:                 tool.Builtins,
		System:                c.System, // "" = prompt.DefaultBase; project instructions are added per session
		Env:                   env,
		NoProjectInstructions: c.NoProjectInstructions,
		CommandPoll:           2 * time.Second,
		Permissions:           perms,
		StorePath:             storeTarget,
		MCPServers:            mcp.FromConfig(file.MCPServers),
		Version:               version,
		Models:                c.modelChoices(env, file),
		OpenModel: func(id string) (llm.Model, error) {
			return c.openModelID(env, file, id)
		},
		Logger:          logger,
		MaxTurnRequests: profileCfg.MaxTurnRequests,
		MaxDepth:        profileCfg.MaxDepth,
		AgentProfile:    profileCfg.AgentProfile,
		SessionContext:  profileCfg.SessionContext,
		FinalOutput:     profileCfg.FinalOutput,
		Profile:         profileCfg.Profile,
		Secrets:         secrets,
		MoreSecrets:     config.KeyringKeysSeen,
		// Multitask is withheld when background tasks are disabled.
		NoBackgroundTasks: config.BackgroundTasksDisabled(env),
		CodeModeLimits:    codeModeLimits(file.CodeMode),
		// Each session's project config is found from its own cwd.
		ForCwd: c.sessionConfig(env, logger),
	})
	return ag, acpserver.Options{
		Agent:              ag,
		Version:            version,
		LaunchDir:          cwd,
		NoModelMessage:     noModel.acpMessage(),
		Logger:             logger,
		MaxLineBytes:       c.MaxLineBytes,
		ClientTools:        c.ClientTools,
		Stored:             true,
		RespondPlace:       respondPlace(env),
		Auth:               c.auth(env, file),
		MCPConfigured:      len(file.MCPServers) > 0,
		InteractionTimeout: file.InteractionTimeout,
		Compat:             c.Compat,
		UserInfo:           userInfo(file.Identity),
		SetAgent:           c.switchProfile(env, file),
		LaunchAgent:        c.launchAgent(),
		NoBackgroundTasks:  config.BackgroundTasksDisabled(env),
	}
}

// terminalNotice is the one line `corvid acp` writes when a person, not an
// editor, started it.
const terminalNotice = "corvid acp speaks the Agent Client Protocol on stdin/stdout; editors launch it. " +
	"In a terminal, try `corvid run -p \"PROMPT\"`, or the offline demo: " +
	"examples/acp-demo.sh ./corvid examples/hello.json \"Hello\". Ctrl-D quits."

func newLogger(path, level string) (*slog.Logger, func(), error) {
	lv, err := parseLogLevel(level)
	if err != nil {
		return nil, nil, err
	}
	var w io.Writer = os.Stderr
	closeFn := func() {}
	if path != "" {
		f, err := os.OpenFile(expandHome(path), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("open log file: %w", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), closeFn, nil
}

// parseLogLevel reads --log-level in any letter case.
func parseLogLevel(level string) (slog.Level, error) {
	switch strings.ToLower(level) {
	case "trace":
		return llm.LevelTrace, nil
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("--log-level %q: use trace, debug, info, warn or error", level)
}

// expandHome turns a leading ~ or ~/ into the home directory, as a shell
// would have done had the path not been quoted (or written in an editor's
// settings, where no shell runs).
func expandHome(path string) string {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return filepath.Join(home, strings.TrimPrefix(path, "~"))
}

// openModel resolves the model. A -m naming a provider without credentials
// is fatal (the caller exits 1 before serving: kage's pinned model). A model
// from CORVID_MODEL or config.toml whose provider has no key, or no model and
// no credentials at all, gives a nil model and what is missing: acp serves
// and session/new answers auth_required with it (noCredentials.acpMessage).
func (c *acpCmd) openModel(env config.Env, file *config.File) (llm.Model, *noCredentials, error) {
	provider, modelID, err := config.ResolveModel(env, file, c.Model)
	if errors.Is(err, config.ErrNoModel) && c.Model == "" {
		return nil, &noCredentials{}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if provider == config.ScriptProvider { // -m, CORVID_MODEL or config alike
		model, err := llm.Open(llm.ProviderConfig{Provider: provider, Model: modelID})
		return model, nil, err
	}
	pc, err := providers.Config(env, file, provider, modelID)
	if errors.Is(err, providers.ErrNoCredentials) && c.Model == "" {
		p, _ := file.Provider(provider)
		return nil, &noCredentials{provider: p, model: provider + ":" + modelID}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	model, err := llm.Open(pc)
	if err != nil {
		return nil, nil, err
	}
	return llm.WithRetry(llm.WithLog(model, slog.Default()), retryPolicy(env)), nil, nil
}

// noCredentials is what keeps corvid from opening a model: the configured
// model's provider has no key (provider set), or there is no model
// configured and no key for any provider (the zero value).
type noCredentials struct {
	provider config.Provider
	model    string // provider:model
}

// acpMessage is the -32000 message of session/new: the editor shows it with
// its login methods (authMethods).
func (n *noCredentials) acpMessage() string {
	if n == nil {
		return "" // a model is open
	}
	if n.model != "" {
		return fmt.Sprintf("Authentication required: the configured model %s needs a %s key. Set %s in the environment the editor starts corvid with, or run `corvid auth login %s` in a terminal, then authenticate (or restart the agent).",
			n.model, n.provider.DisplayName(), strings.Join(n.provider.KeyVars, " or "), n.provider.Name)
	}
	return "Authentication required: corvid has no model credentials. Set ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY, …) in the environment the editor starts corvid with, or run `corvid auth login` in a terminal, then authenticate (or restart the agent); or launch with -m script:FILE for the offline scripted model."
}

// printMessage is what `corvid run -p` says on stderr before it exits.
func (n *noCredentials) printMessage() string {
	if n.model != "" {
		return fmt.Sprintf("the configured model %s needs a %s key: set %s, or run `corvid auth login %s`, then run the command again.",
			n.model, n.provider.DisplayName(), strings.Join(n.provider.KeyVars, " or "), n.provider.Name)
	}
	return "no model credentials: set ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY, …) or run `corvid auth login`, then run the command again; or pass -m script:FILE for the offline scripted model."
}

// modelChoices lists, on first use, the catalog models of every provider
// that has credentials (the session's model option). A scripted model
// stands alone.
func (c *acpCmd) modelChoices(env config.Env, file *config.File) func() []agent.ModelChoice {
	if p, _ := llm.ParseModelID(c.Model); p == "script" {
		return nil
	}
	return sync.OnceValue(func() []agent.ModelChoice {
		var out []agent.ModelChoice
		for _, st := range config.StatusOf(env, file.AllProviders()) {
			if !st.Configured || !st.Provider.NeedsKey {
				continue
			}
			for _, e := range catalog.List(st.Provider.Name) {
				out = append(out, agent.ModelChoice{ID: st.Provider.Name + ":" + e.ID, Name: e.Name, Description: st.Provider.DisplayName()})
			}
		}
		return out
	})
}

// openModelID opens provider:model for a session that switches models.
func (c *acpCmd) openModelID(env config.Env, file *config.File, id string) (llm.Model, error) {
	if p, m := llm.ParseModelID(id); p == config.ScriptProvider {
		// Only a scripted session's sub-agents get here (the agent
		// offers other sessions no scripted model).
		return llm.Open(llm.ProviderConfig{Provider: p, Model: m})
	}
	provider, modelID, err := config.ParseModel(file, id)
	if err != nil {
		return nil, err
	}
	// The user may have stored this provider's key since start-up (corvid
	// auth login in a terminal): ask the keyring again rather than trust a
	// remembered "not found".
	config.ForgetKeyringCache()
	pc, err := providers.Config(env, file, provider, modelID)
	if err != nil {
		return nil, err
	}
	m, err := llm.Open(pc)
	if err != nil {
		return nil, err
	}
	return llm.WithRetry(llm.WithLog(m, slog.Default()), retryPolicy(env)), nil
}

// permissions combines the configured rules with the launch flags. A bad
// rule or --allow entry is a launch error, not a silent no-op.
func (c *acpCmd) permissions(file *config.File) (agent.Permissions, error) {
	rules, err := permission.ParseRules(file.Permissions.Allow, file.Permissions.Ask, file.Permissions.Deny)
	if err != nil {
		return agent.Permissions{}, fmt.Errorf("config permissions: %w", err)
	}
	for _, a := range c.Allow {
		if _, err := permission.ParseRule(a); err != nil {
			return agent.Permissions{}, fmt.Errorf("--allow %q: %w", a, err)
		}
	}
	mode := file.DefaultMode
	if c.Mode != "" {
		mode = c.Mode
	}
	if mode == "" && c.kage && !c.Yolo {
		// kage's document: every tool call surfaces as a permission
		// prompt ("kage never auto-approves").
		mode = string(permission.ModeAsk)
	}
	mode = config.ModeAlias(mode) // kage's allow/deny too
	if mode != "" && !slices.Contains(permission.Modes, permission.Mode(mode)) {
		return agent.Permissions{}, fmt.Errorf("unknown mode %q (want one of %v)", mode, permission.Modes)
	}
	return agent.Permissions{Rules: rules, Yolo: c.Yolo, Allow: c.Allow, Mode: permission.Mode(mode)}, nil
}

// sessionConfig returns the agent's ForCwd: the configuration of a session
// rooted at dir, its project's .corvid/config.toml over the user's (and the
// --agent profile, or dir's agent.leviath), with the launch flags on top.
func (c *acpCmd) sessionConfig(env config.Env, logger *slog.Logger) func(dir string) (agent.SessionConfig, error) {
	return func(dir string) (agent.SessionConfig, error) {
		f, err := c.loadConfig(env, dir)
		if err != nil {
			return agent.SessionConfig{}, err
		}
		c.Profile.fold(f, dir)
		p, err := c.permissions(f)
		if err != nil {
			return agent.SessionConfig{}, err
		}
		for _, ign := range f.Ignored {
			logger.Warn("project config setting ignored", "cwd", dir, "ignored", ign)
		}
		sb, err := c.sandbox(env, f)
		if err != nil {
			return agent.SessionConfig{}, err
		}
		return agent.SessionConfig{Permissions: p, MCPServers: mcp.FromConfig(f.MCPServers), Sandbox: sb, Notices: f.Ignored}, nil
	}
}

// sandbox is the shell sandbox of a session: the --sandbox flag over the
// config's sandbox; network only when a flag or the config allows it.
func (c *acpCmd) sandbox(env config.Env, file *config.File) (tool.Sandbox, error) {
	mode := file.Sandbox
	if c.Sandbox != "" {
		mode = c.Sandbox
	}
	if mode == "" {
		mode = tool.SandboxOff
	}
	if !slices.Contains(tool.SandboxModes, mode) {
		return tool.Sandbox{}, fmt.Errorf("unknown sandbox %q (want one of %v)", mode, tool.SandboxModes)
	}
	sb := tool.Sandbox{Mode: mode, Network: c.SandboxNetwork || file.SandboxNetwork, UnixFilter: config.SandboxUnixFilter(env)}
	if sb.On() {
		exe, err := os.Executable()
		if err != nil {
			return tool.Sandbox{}, fmt.Errorf("sandbox: cannot find the corvid binary: %w", err)
		}
		sb.Exe = exe
	}
	return sb, nil
}

// auth is what initialize offers for credentials, and what authenticate
// and logout do.
func (c *acpCmd) auth(env config.Env, file *config.File) *acpserver.Auth {
	a := &acpserver.Auth{
		TerminalArgs: []string{"--login"},
		Resolve: func() (llm.Model, error) {
			// A key may have been stored since start-up by another
			// process (corvid acp --login): ask the keyring again.
			config.ForgetKeyringCache()
			m, _, err := c.openModel(env, file)
			return m, err
		},
		Logout: func() error {
			for _, p := range file.AllProviders() {
				if _, err := config.Logout(env, p.Name); err != nil {
					return err
				}
			}
			return nil
		},
	}
	seen := map[string]bool{} // providers sharing a key (xiaomi's plans) offer it once
	for _, p := range file.AllProviders() {
		if p.NeedsKey && len(p.KeyVars) > 0 && !seen[p.KeyVars[0]] {
			seen[p.KeyVars[0]] = true
			a.EnvVars = append(a.EnvVars, acpserver.AuthEnvVar{Provider: p.Name, Title: p.DisplayName(), Var: p.KeyVars[0]})
		}
	}
	return a
}

// login is ACP terminal authentication: ask for a provider (the -m one by
// default) and its key on the terminal, store it, exit.
func (c *acpCmd) login() error {
	env := config.OSEnv{}
	cwd, _ := os.Getwd()
	provider, _ := llm.ParseModelID(c.Model)
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		name := provider
		if name == "" || name == "script" {
			name = "PROVIDER"
		}
		return fmt.Errorf("corvid acp --login asks for the key on a terminal, and standard input is not one; "+
			"from a script, pipe the key to `corvid auth login %s --stdin`", name)
	}
	if provider == "" || provider == "script" {
		provider = askProvider(os.Stdin, os.Stderr)
	}
	return runLogin(env, cwd, provider, false, os.Stdin, os.Stdout, os.Stderr)
}

// retryPolicy is the model retry policy, tunable by environment.
func retryPolicy(env config.Env) llm.RetryPolicy {
	r := config.RetrySettings(env)
	return llm.RetryPolicy{MaxAttempts: r.MaxAttempts, BaseDelay: r.BaseDelay,
		OnRetry: func(attempt int, delay time.Duration, err error) {
			slog.Debug("model request failed; retrying", "attempt", attempt, "delay", delay, "cause", err.Error())
		}}
}
