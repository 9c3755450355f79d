package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/profile"
)

// profileFlags are the agent-profile flags shared by acp and run (Leviath's
// agent-client flags among them).
type profileFlags struct {
	Agent              string `name:"agent" placeholder:"NAME|PATH" help:"Agent profile: a name found in .corvid/agents/ (trusted projects) or the user's config agents/ folder, or the path to a profile TOML or a Leviath agent.leviath. Without it, a session whose cwd holds an agent.leviath uses that."`
	MaxDepth           *int   `name:"max-depth" placeholder:"N" help:"Override the profile's maximum sub-agent depth (0: no sub-agents)."`
	NoSeedCommands     bool   `name:"no-seed-commands" help:"Refuse the profile's seed = { command = ... } regions (each says it was refused)."`
	OutputFormat       string `name:"output-format" placeholder:"LABEL" help:"Ask for a final output in this shape (any label): the agent gets a submit_output tool, and what it submits is sent last, as a message of its own marked _meta corvid.dev/finalOutput."`
	OutputInstructions string `name:"output-instructions" placeholder:"TEXT" help:"Guidance about the final output's shape (with --output-format)."`

	launch *profile.Profile // the --agent profile, once resolved
	env    config.Env       // the environment applyProfile was given
}

// fold adds the --agent profile's tool rules and interaction timeout to a
// loaded configuration: the launch file, and each session's own (found
// from its cwd), so a profile's deny holds in every session. A profile
// that came with a project adds its allow rules only once the file is
// trusted as it is (Profile.Trusted). Without
// --agent, an agent.leviath in dir (Leviath's rule) adds its ask and deny
// rules: like an untrusted project config, a blueprint that came with the
// project may tighten the rules but never loosen them.
func (f *profileFlags) fold(file *config.File, dir string) {
	p := f.launch
	if p == nil {
		if found, err := profile.InDir(f.env, dir); err == nil && found != nil {
			file.Permissions.Ask = append(file.Permissions.Ask, found.Ask...)
			file.Permissions.Deny = append(file.Permissions.Deny, found.Deny...)
		}
		return
	}
	if p.Trusted {
		file.Permissions.Allow = append(file.Permissions.Allow, p.Allow...)
	}
	file.Permissions.Ask = append(file.Permissions.Ask, p.Ask...)
	file.Permissions.Deny = append(file.Permissions.Deny, p.Deny...)
	if p.InteractionTimeout > 0 {
		file.InteractionTimeout = p.InteractionTimeout
	} else if p.InteractionTimeout < 0 {
		file.InteractionTimeout = 0
	}
}

// profileInfo is what a session keeps of profile p: --max-depth, when
// given, over the profile's own depth; --max-depth 0 means no sub-agents
// whatever the profile says.
func (f *profileFlags) profileInfo(p *profile.Profile) *agent.ProfileInfo {
	info := &agent.ProfileInfo{Name: p.Name, MaxDepth: p.MaxDepth}
	if f.MaxDepth != nil {
		info.MaxDepth = *f.MaxDepth
		info.NoSubAgents = *f.MaxDepth == 0
	}
	return info
}

// subProfiles resolves the profile a sub-agent is started with (the task
// tool's profile, by name only): its prompt and instructions, description
// and model.
func subProfiles(env config.Env, file *config.File) func(name string) (agent.SubProfile, error) {
	return func(name string) (agent.SubProfile, error) {
		if profile.IsPath(name) {
			// The model names it: a path would let it pick any file as a
			// profile, and with it any system_prompt_file, unasked.
			return agent.SubProfile{}, fmt.Errorf("profile %q: a sub-agent's profile is a name from the profile folders (corvid agents list), not a path", name)
		}
		p, err := profile.Resolve(env, file, name)
		if err != nil {
			return agent.SubProfile{}, err
		}
		text := strings.TrimSpace(p.System)
		if ins := strings.TrimSpace(p.Instructions); ins != "" {
			text = strings.TrimSpace(text + "\n\n" + ins)
		}
		if text != "" {
			text = fmt.Sprintf("# Agent profile %s\n\n%s", p.Name, text)
		}
		model, _ := profileModel(env, file, p)
		return agent.SubProfile{Name: p.Name, Description: p.Description, Model: model, Prompt: text}, nil
	}
}

// applyProfile resolves --agent and folds the profile into the launch:
// model and system prompt (unless given on the command line), tool rules,
// limits; it returns the agent's SessionContext hook, which also handles a
// session cwd's agent.leviath when no --agent was given.
func (f *profileFlags) applyProfile(env config.Env, file *config.File, model, system *string, logger *slog.Logger, cfg *agent.Config) error {
	f.env = env
	if f.MaxDepth != nil && *f.MaxDepth < 0 {
		return fmt.Errorf("--max-depth %d: the depth is 0 (no sub-agents) or more", *f.MaxDepth)
	}
	switch {
	case f.OutputFormat != "":
		cfg.FinalOutput = &agent.FinalOutput{Format: f.OutputFormat, Instructions: f.OutputInstructions}
	case f.OutputInstructions != "":
		logger.Warn("--output-instructions is ignored without --output-format LABEL")
	}
	var launch *profile.Profile
	if f.Agent != "" {
		p, err := f.applyLaunchProfile(env, file, model, system, logger, cfg)
		if err != nil {
			return err
		}
		launch = p
	}
	cfg.MaxDepth = f.MaxDepth
	cfg.AgentProfile = subProfiles(env, file)
	cfg.SessionContext = sessionContext(env, launch, f.NoSeedCommands, logger)
	return nil
}

// applyLaunchProfile resolves the --agent profile and folds it into the
// launch: model and system prompt (unless given on the command line),
// tool rules and limits.
func (f *profileFlags) applyLaunchProfile(env config.Env, file *config.File, model, system *string, logger *slog.Logger, cfg *agent.Config) (*profile.Profile, error) {
	p, err := profile.Resolve(env, file, f.Agent)
	if err != nil {
		return nil, err
	}
	if *model == "" {
		id, warning := profileModel(env, file, p)
		*model = id
		if warning != "" {
			p.Warnings = append(p.Warnings, warning)
		}
	}
	if !p.Trusted && len(p.Allow) > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("its allow rules %q are not applied: %s", p.Allow, p.Untrusted))
	}
	for _, w := range p.Warnings {
		logger.Warn("agent profile", "agent", p.Name, "path", p.Path, "warning", w)
	}
	if *system == "" && p.System != "" {
		*system = p.System
	}
	f.launch = p
	f.fold(file, "")
	if p.MaxTurnRequests > 0 {
		cfg.MaxTurnRequests = p.MaxTurnRequests
	}
	cfg.Profile = f.profileInfo(p)
	logger.Info("agent profile", "agent", p.Name, "from", p.Path, "max_depth", cfg.Profile.MaxDepth)
	return p, nil
}

// sessionContext is the agent's SessionContext hook: the launch profile's
// context, or else that of a session cwd's own agent.leviath.
func sessionContext(env config.Env, launch *profile.Profile, noSeed bool, logger *slog.Logger) func(agent.SessionStart) (string, []string) {
	return func(ss agent.SessionStart) (string, []string) {
		p := launch
		var notices []string
		if p == nil {
			found, ns, err := cwdProfile(env, ss.Cwd, logger)
			if err != nil || found == nil {
				return "", ns
			}
			p, notices = found, ns
		}
		for _, w := range p.Warnings {
			notices = append(notices, fmt.Sprintf("agent %s: %s", p.Name, w))
		}
		if !p.Trusted && !noSeed && hasCommandSeed(p) {
			msg := "the seed commands of " + p.Path + " did not run: " + p.Untrusted
			logger.Warn("agent profile", "path", p.Path, "warning", msg)
			notices = append(notices, msg)
		}
		text := p.Context(spawn(ss, noSeed))
		if launch == nil && p.System != "" {
			text = fmt.Sprintf("# Agent %s\n\n%s\n\n%s", p.Name, strings.TrimSpace(p.System), text)
		}
		return text, notices
	}
}

// cwdProfile finds a session cwd's own agent.leviath (nil when there is
// none), with the notices its unapplied fields call for.
func cwdProfile(env config.Env, cwd string, logger *slog.Logger) (*profile.Profile, []string, error) {
	p, err := profile.InDir(env, cwd)
	if err != nil {
		logger.Warn("agent.leviath", "cwd", cwd, "err", err)
		return nil, []string{"the agent.leviath in this directory could not be read: " + err.Error()}, err
	}
	if p == nil {
		return nil, nil, nil
	}
	for _, w := range p.Warnings {
		logger.Warn("agent.leviath", "path", p.Path, "warning", w)
	}
	var notices []string
	if len(p.Allow) > 0 || p.Model != "" || p.MaxTurnRequests > 0 || p.InteractionTimeout != 0 {
		msg := "the allow rules, model and limits of a session's own agent.leviath are not applied (its ask and deny rules are); launch with --agent " + p.Path + " to apply them"
		logger.Warn("agent.leviath", "path", p.Path, "warning", msg)
		notices = append(notices, msg)
	}
	return p, notices, nil
}

// spawn is the profile.Spawn of a starting session.
func spawn(ss agent.SessionStart, noSeedCommands bool) profile.Spawn {
	return profile.Spawn{Cwd: ss.Cwd, NoCommands: noSeedCommands, ReadFile: ss.ReadFile, Shell: ss.Shell}
}

func hasCommandSeed(p *profile.Profile) bool {
	for _, s := range p.Seeds {
		if s.Command != "" {
			return true
		}
	}
	return false
}

// agentsCmd lists and shows agent profiles.
type agentsCmd struct {
	List agentsListCmd `cmd:"" default:"withargs" help:"List the agent profiles found, and where."`
	Show agentsShowCmd `cmd:"" help:"Show what corvid makes of one profile (NAME or PATH)."`
}

type agentsListCmd struct {
	JSON bool `name:"json" help:"Print JSON."`
}

func (c agentsListCmd) Run() error {
	env := config.OSEnv{}
	cwd, _ := os.Getwd()
	file, err := config.Load(env, cwd)
	if err != nil {
		return err
	}
	// A profile's name and description are a file's text, maybe a
	// project's: shown on a terminal, never obeyed (toStdout).
	return toStdout(func(w io.Writer) error { return listAgents(w, profile.List(env, file, cwd), c.JSON) })
}

func listAgents(w io.Writer, ps []*profile.Profile, asJSON bool) error {
	if asJSON {
		type row struct {
			Name, Description, Source, Format, Path string
			Warnings                                []string `json:",omitempty"`
		}
		out := []row{}
		for _, p := range ps {
			out = append(out, row{p.Name, p.Description, p.Source, p.Format, p.Path, p.Warnings})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(ps) == 0 {
		fmt.Fprintln(w, "No agent profiles found. Put NAME.toml (or a Leviath NAME.leviath) in ~/.config/corvid/agents/ or a trusted project's .corvid/agents/.")
		return nil
	}
	for _, p := range ps {
		fmt.Fprintf(w, "%-20s %-8s %s\n", p.Name, p.Source, p.Path)
		if p.Description != "" {
			fmt.Fprintf(w, "%-20s %s\n", "", p.Description)
		}
	}
	return nil
}

type agentsShowCmd struct {
	Agent string `arg:"" help:"Profile name or path."`
}

func (c agentsShowCmd) Run() error {
	env := config.OSEnv{}
	cwd, _ := os.Getwd()
	file, err := config.Load(env, cwd)
	if err != nil {
		return err
	}
	p, err := profile.Resolve(env, file, c.Agent)
	if err != nil {
		return err
	}
	// What a profile allows is what a user reads before trusting a
	// project's file: on a terminal its text is shown, never obeyed, so
	// it cannot draw a harmless list over the real one (toStdout).
	return toStdout(func(w io.Writer) error { return showAgent(w, p) })
}

// showAgent writes what corvid makes of p.
func showAgent(w io.Writer, p *profile.Profile) error {
	fmt.Fprintf(w, "name:         %s\nsource:       %s (%s)\nformat:       %s\n", p.Name, p.Source, p.Path, p.Format)
	show := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-13s %s\n", k+":", v)
		}
	}
	show("description", p.Description)
	show("model", strings.Join(p.Models, ", else "))
	show("allow", strings.Join(p.Allow, ", "))
	show("ask", strings.Join(p.Ask, ", "))
	show("deny", strings.Join(p.Deny, ", "))
	if p.MaxDepth > 0 {
		show("max depth", fmt.Sprint(p.MaxDepth))
	}
	if p.InteractionTimeout > 0 {
		show("interaction", p.InteractionTimeout.String())
	}
	if p.MaxTurnRequests > 0 {
		show("max requests", fmt.Sprint(p.MaxTurnRequests))
	}
	for _, s := range p.Seeds {
		what := s.Command
		kind := "command"
		if s.File != "" {
			kind, what = "file", s.File
		} else if s.Command == "" {
			kind, what = "text", fmt.Sprintf("%d bytes", len(s.Text))
		}
		fmt.Fprintf(w, "seed:         %s: %s %s\n", s.Region, kind, what)
	}
	if hasCommandSeed(p) && !p.Trusted {
		fmt.Fprintf(w, "seed commands: do not run: %s\n", p.Untrusted)
	}
	if p.System != "" {
		fmt.Fprintf(w, "system prompt:\n%s\n", indent(p.System))
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "warning:      %s\n", warn)
	}
	return nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ")
}
