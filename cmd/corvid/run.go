package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/mcp"
	"github.com/corvid-agent/corvid/internal/print"
	"github.com/corvid-agent/corvid/internal/tool"
)

// runCmd is print mode: `corvid run -p PROMPT` (also `corvid -p PROMPT`).
type runCmd struct {
	Print                 bool         `short:"p" name:"print" help:"Answer the prompt on stdout and exit (what run always does; accepted as in claude -p, gemini -p)."`
	Prompt                []string     `arg:"" optional:"" help:"The prompt. Piped stdin is added after it (git diff | corvid run -p \"review this\")."`
	Format                string       `name:"format" default:"text" enum:"text,json,stream-json" help:"text: the answer as it streams; json: one object at the end (text, stopReason, usage, costUsd, sessionId); stream-json: one JSON event a line, the result last."`
	Resume                string       `name:"resume" short:"r" placeholder:"ID" help:"Continue the stored session ID."`
	Continue              bool         `name:"continue" short:"c" help:"Continue the newest stored session of this directory."`
	Model                 string       `short:"m" name:"model" placeholder:"PROVIDER:MODEL" help:"Model, as provider:model or provider/model."`
	System                string       `name:"system" placeholder:"TEXT" help:"Replace the system prompt with TEXT."`
	Ask                   bool         `name:"ask" help:"Ask on the terminal (/dev/tty) before a tool call that needs approval, instead of refusing it."`
	Yolo                  bool         `name:"yolo" help:"Run every tool call without asking (configured denies still apply). Without it, a call that would ask is refused."`
	Allow                 []string     `name:"allow" placeholder:"TOOL" help:"Run this tool without asking (repeatable), e.g. --allow write."`
	LogFile               string       `name:"log-file" placeholder:"PATH" help:"Write logs to PATH instead of stderr."`
	LogLevel              string       `name:"log-level" default:"warn" help:"Log level: trace, debug, info, warn or error (any case)."`
	NoProjectInstructions bool         `name:"no-project-instructions" help:"Leave AGENTS.md files (and CODEBUDDY.md, CLAUDE.md, GEMINI.md) out of the system prompt."`
	Profile               profileFlags `embed:""`
	StoreFlag             storeFlag    `embed:""`
}

func (c *runCmd) Run() error {
	prompt, err := c.promptText(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corvid:", err)
		os.Exit(print.ExitError)
	}
	if strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(os.Stderr, `corvid: run needs a prompt: corvid run -p "PROMPT" (or pipe it on stdin)`)
		os.Exit(print.ExitUsage)
	}
	if c.Resume != "" && c.Continue {
		fmt.Fprintln(os.Stderr, "corvid: --resume and --continue cannot be used together")
		os.Exit(print.ExitUsage)
	}
	logger, closeLog, err := newLogger(c.LogFile, c.LogLevel)
	if err != nil {
		return err
	}
	defer closeLog()

	// As in acp: corvid reads a snapshot of its environment, and the
	// children it starts inherit none of the provider keys.
	env := config.SnapshotEnv()
	cwd, _ := os.Getwd()
	file, err := config.Load(env, cwd)
	if err != nil {
		return err
	}
	// Before the environment is scrubbed (see acpCmd.wire).
	storeTarget, err := c.StoreFlag.target(env, file)
	if err == nil {
		err = handOffPostgres(storeTarget)
	}
	if err != nil {
		exitStoreError(err)
	}
	var profileCfg agent.Config
	if err := c.Profile.applyProfile(env, file, &c.Model, &c.System, logger, &profileCfg); err != nil {
		fmt.Fprintln(os.Stderr, "corvid:", err)
		os.Exit(print.ExitError)
	}
	if c.Profile.launch == nil {
		c.Profile.fold(file, cwd) // the cwd's agent.leviath, if any: its ask and deny rules
	}
	secrets := withholdSecrets(env, file, logger)
	launch := &acpCmd{Model: c.Model, System: c.System, Yolo: c.Yolo, Allow: c.Allow, Profile: c.Profile}
	model, noModel, err := launch.openModel(env, file)
	if err != nil {
		return err
	}
	if w := catalogWarning(env, file, launch.Model); w != "" {
		logger.Warn(w)
	}
	if model == nil {
		fmt.Fprintln(os.Stderr, "corvid:", noModel.printMessage())
		os.Exit(print.ExitError)
	}
	perms, err := launch.permissions(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corvid:", err)
		os.Exit(print.ExitUsage)
	}
	if err := checkStore(storeTarget); err != nil {
		exitStoreError(err)
	}
	ag := agent.New(agent.Config{
		Model:                 model,
		Tools:                 tool.Builtins,
		System:                c.System,
		Env:                   env,
		NoProjectInstructions: c.NoProjectInstructions,
		Permissions:           perms,
		StorePath:             storeTarget,
		MCPServers:            mcp.FromConfig(file.MCPServers),
		Version:               version,
		Logger:                logger,
		MaxTurnRequests:       profileCfg.MaxTurnRequests,
		MaxDepth:              profileCfg.MaxDepth,
		AgentProfile:          profileCfg.AgentProfile,
		SessionContext:        profileCfg.SessionContext,
		FinalOutput:           profileCfg.FinalOutput,
		Profile:               profileCfg.Profile,
		Secrets:               secrets,
		MoreSecrets:           config.KeyringKeysSeen,
		CodeModeLimits:        codeModeLimits(file.CodeMode),
		ForCwd:                launch.sessionConfig(env, logger),
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSignals := watchPrintSignals(cancel)
	defer stopSignals()

	var tty *os.File
	if c.Ask {
		if tty, err = os.OpenFile("/dev/tty", os.O_RDWR, 0); err != nil {
			fmt.Fprintln(os.Stderr, "corvid: --ask needs a terminal to ask on:", err)
			os.Exit(print.ExitUsage)
		}
		defer tty.Close()
	}
	opts := print.Options{
		Agent:    ag,
		Prompt:   prompt,
		Format:   c.Format,
		Cwd:      cwd,
		Resume:   c.Resume,
		Continue: c.Continue,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Terminal: isTerminal(os.Stdout),
		Progress: isTerminal(os.Stderr),
	}
	if tty != nil {
		opts.TTY = tty
	}
	code := print.Run(ctx, opts)
	if err := ag.Close(); err != nil {
		logger.Error("close session store", "err", err)
		if code == print.ExitOK {
			code = print.ExitError
		}
	}
	closeLog()
	os.Exit(code)
	return nil
}

// promptText joins the prompt argument and piped stdin.
func (c *runCmd) promptText(stdin *os.File) (string, error) {
	prompt := strings.Join(c.Prompt, " ")
	if isTerminal(stdin) {
		return prompt, nil
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	piped := strings.TrimRight(string(b), "\n")
	switch {
	case piped == "":
		return prompt, nil
	case prompt == "":
		return piped, nil
	}
	return prompt + "\n\n" + piped, nil
}

// isTerminal reports whether f is a character device (a terminal; also
// /dev/null, which holds nothing to read or show anyway).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// watchPrintSignals: the first SIGINT or SIGTERM cancels the turn (exit
// 130 once it has wound down); a second one exits at once.
func watchPrintSignals(cancel func()) func() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case <-sigs:
			}
			if n > 0 {
				os.Exit(print.ExitInterrupted)
			}
			cancel()
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}
