package profile

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Leviath's blueprint (agent.leviath, the manifest `lev blueprint migrate`
// converts; GEMISIS/leviath docs/content/blueprint-format.md, "Migrating
// from agent.leviath") is a multi-stage graph run by Leviath's daemon.
// corvid runs one agent loop, so it maps what has a meaning there:
//
//	[agent] name, description          → the profile's name, description
//	entry stage (entry_stage or first) → system_prompt, model (the ordered list; see leviathModels)
//	[tool_permissions] tool = "…"      → allow/ask/deny rules (tool names mapped)
//	[limits]                           → max_depth, interaction_timeout_secs, max_iterations
//	[context.regions] seed = {…}       → seed regions (command, file(s), literal)
//
// and names everything else in a warning.

// leviathTools maps Leviath's built-in tool names to corvid's.
var leviathTools = map[string]string{
	"read_file": "read", "write_file": "write", "edit_file": "edit", "shell": "shell",
	"list_dir": "ls", "list_directory": "ls", "glob": "glob", "grep": "grep", "search": "grep",
	"web_fetch": "fetch", "fetch": "fetch", "delete_file": "delete", "move_file": "move",
}

func parseLeviath(data []byte, dir string) (*Profile, error) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return nil, err
	}
	p := &Profile{Format: "leviath"}
	warn := func(format string, a ...any) { p.Warnings = append(p.Warnings, fmt.Sprintf(format, a...)) }

	agent, _ := raw["agent"].(map[string]any)
	entry := p.leviathAgent(agent, warn)
	stages, _ := raw["stages"].(map[string]any)
	p.leviathStages(stages, entry, warn)
	if perms, ok := raw["tool_permissions"].(map[string]any); ok {
		p.leviathPermissions(perms, warn)
	}
	if limits, ok := raw["limits"].(map[string]any); ok {
		p.leviathLimits(limits, warn)
	}
	if ctx, ok := raw["context"].(map[string]any); ok {
		p.leviathContext(ctx, warn)
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		switch k {
		case "agent", "stages", "tool_permissions", "limits", "context":
		default:
			warn("[%s] is not used by corvid", k)
		}
	}
	return p, nil
}

// leviathAgent maps [agent] and returns its entry_stage ("" if none).
func (p *Profile) leviathAgent(agent map[string]any, warn func(string, ...any)) string {
	p.Name, _ = agent["name"].(string)
	p.Description, _ = agent["description"].(string)
	entry, _ := agent["entry_stage"].(string)
	for k := range agent {
		switch k {
		case "name", "description", "version", "entry_stage":
		default:
			warn("[agent] %s is not used by corvid", k)
		}
	}
	return entry
}

// leviathStages maps the entry stage (entry, else a stage named like the
// usual first ones, else the first by name) and names the others.
func (p *Profile) leviathStages(stages map[string]any, entry string, warn func(string, ...any)) {
	names := slices.Sorted(maps.Keys(stages))
	if entry == "" && len(names) > 0 {
		// TOML tables keep no order once decoded; the entry stage is
		// entry_stage, else a stage named like the usual first ones.
		entry = names[0]
		for _, n := range []string{"main", "default", "implement", "work", "run"} {
			if _, ok := stages[n]; ok {
				entry = n
				break
			}
		}
	}
	if st, ok := stages[entry].(map[string]any); ok {
		p.leviathEntryStage(st, entry, warn)
	}
	for _, n := range names {
		if n != entry {
			warn("stage %q is not run: corvid runs only the entry stage %q", n, entry)
		}
	}
}

func (p *Profile) leviathEntryStage(st map[string]any, entry string, warn func(string, ...any)) {
	p.System, _ = st["system_prompt"].(string)
	if m, ok := st["model"]; ok {
		p.leviathModels(m, entry, warn)
	}
	if n, ok := st["max_iterations"].(int64); ok {
		p.MaxTurnRequests = int(n)
	}
	for k := range st {
		switch k {
		case "system_prompt", "model", "max_iterations":
		case "available_tools":
			warn("stage %q available_tools is not applied: corvid offers its own tool set (use [tool_permissions] deny to withhold one)", entry)
		case "transitions":
			warn("stage %q transitions are not followed: corvid runs one stage", entry)
		default:
			warn("stage %q key %s is not used by corvid", entry, k)
		}
	}
}

// leviathPermissions maps [tool_permissions] to rules, with Leviath's tool
// names turned into corvid's.
func (p *Profile) leviathPermissions(perms map[string]any, warn func(string, ...any)) {
	for _, tool := range slices.Sorted(maps.Keys(perms)) {
		action, _ := perms[tool].(string)
		name, known := leviathTools[tool]
		if !known {
			name = tool // corvid's own name, or an MCP tool
		}
		switch action {
		case "allow":
			p.Allow = append(p.Allow, name)
		case "ask":
			p.Ask = append(p.Ask, name)
		case "deny":
			p.Deny = append(p.Deny, name)
		default:
			warn("[tool_permissions] %s = %q is not allow, ask or deny; ignored", tool, action)
		}
	}
}

func (p *Profile) leviathLimits(limits map[string]any, warn func(string, ...any)) {
	for _, k := range slices.Sorted(maps.Keys(limits)) {
		n, isInt := limits[k].(int64)
		switch {
		case (k == "max_depth" || k == "max_child_depth") && isInt:
			p.MaxDepth = int(n)
		case k == "interaction_timeout_secs" && isInt:
			p.InteractionTimeout = time.Duration(n) * time.Second
			if n == 0 {
				p.InteractionTimeout = -1 // wait forever
			}
		case k == "max_iterations" && isInt:
			p.MaxTurnRequests = int(n)
		default:
			warn("[limits] %s is not used by corvid", k)
		}
	}
}

func (p *Profile) leviathContext(ctx map[string]any, warn func(string, ...any)) {
	regions, _ := ctx["regions"].(map[string]any)
	var shapes []string
	for _, name := range slices.Sorted(maps.Keys(regions)) {
		r, _ := regions[name].(map[string]any)
		shapes = append(shapes, name)
		p.addLeviathSeed(name, r["seed"], warn)
	}
	if len(shapes) > 0 {
		warn("context regions (%s) are not laid out as regions: corvid keeps one conversation; seeds are placed in the system prompt", strings.Join(shapes, ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(ctx)) {
		if k != "regions" {
			warn("[context] %s is not used by corvid", k)
		}
	}
}

func (p *Profile) addLeviathSeed(region string, seed any, warn func(string, ...any)) {
	switch s := seed.(type) {
	case nil:
	case string:
		warn("region %q is seeded by the caller (seed = %q): corvid has no run inputs; put it in the prompt", region, s)
	case map[string]any:
		switch {
		case s["command"] != nil:
			cmd, _ := s["command"].(string)
			p.Seeds = append(p.Seeds, Seed{Region: region, Command: cmd})
		case s["file"] != nil || s["files"] != nil:
			if f, ok := s["file"].(string); ok {
				p.Seeds = append(p.Seeds, Seed{Region: region, File: f})
			}
			files, _ := s["files"].([]any)
			for _, f := range files {
				if fs, ok := f.(string); ok {
					p.Seeds = append(p.Seeds, Seed{Region: region, File: fs})
				}
			}
		case s["literal"] != nil:
			text, _ := s["literal"].(string)
			p.Seeds = append(p.Seeds, Seed{Region: region, Text: text})
		default:
			warn("region %q seed kind %v is not supported by corvid", region, slices.Sorted(maps.Keys(s)))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(s)) {
			switch k {
			case "command", "file", "files", "literal":
			default:
				warn("region %q seed key %s is not used by corvid", region, k)
			}
		}
	default:
		warn("region %q has a seed corvid cannot read", region)
	}
}

// leviathProviders maps Leviath's provider names to corvid's where they
// differ.
var leviathProviders = map[string]string{"google": "gemini"}

// leviathModels reads a stage's model: Leviath's table
// { models = [{ provider, model }, …], allow_user_default = true } (an
// ordered list: the first entry whose provider is available wins, then the
// user's default unless allow_user_default is false), or the same list
// written as "provider/model" strings, or one such string.
func (p *Profile) leviathModels(v any, stage string, warn func(string, ...any)) {
	p.ModelFallback = true // Leviath's default for allow_user_default
	var list []any
	switch m := v.(type) {
	case string:
		list = []any{m}
	case []any:
		list = m
	case map[string]any:
		list, _ = m["models"].([]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			switch k {
			case "models":
			case "allow_user_default":
				if b, ok := m[k].(bool); ok {
					p.ModelFallback = b
				} else {
					warn("stage %q model.allow_user_default is not true or false; true is used", stage)
				}
			case "parameters":
				warn("stage %q model.parameters (%s) are not applied: corvid sends each provider its own defaults", stage, strings.Join(slices.Sorted(maps.Keys(asTable(m[k]))), ", "))
			case "request_timeout_secs":
				warn("stage %q model.request_timeout_secs is not applied: corvid's own request timeouts hold", stage)
			default:
				warn("stage %q model.%s is not used by corvid", stage, k)
			}
		}
	default:
		warn("stage %q model is neither a model table, a list nor a string; the launch model is used", stage)
		return
	}
	for _, e := range list {
		var prov, model string
		switch e := e.(type) {
		case string:
			prov, model, _ = strings.Cut(e, "/")
			if model == "" {
				prov, model, _ = strings.Cut(e, ":")
			}
		case map[string]any:
			prov, _ = e["provider"].(string)
			model, _ = e["model"].(string)
		}
		if model == "" || prov == "" {
			warn("stage %q model entry %v names no provider and model; it is skipped", stage, e)
			continue
		}
		if c, ok := leviathProviders[prov]; ok {
			prov = c
		}
		p.Models = append(p.Models, prov+":"+model)
	}
	if len(p.Models) > 0 {
		p.Model = p.Models[0]
	}
}

func asTable(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
