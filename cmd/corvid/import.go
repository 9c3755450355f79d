package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/corvid-agent/corvid/internal/config"
)

// importCmd copies another agent's settings into corvid's config.
type importCmd struct {
	Kage importKageCmd `cmd:"" help:"Copy kage's providers, keys (into corvid's credential store), MCP servers and permission rules into corvid's config."`
}

type importKageCmd struct {
	Yes bool `name:"yes" short:"y" help:"Write without asking (for scripts)."`
}

func (c *importKageCmd) Run() error {
	return runImportKage(config.OSEnv{}, c.Yes, os.Stdin, os.Stdout)
}

// kageConfig is the part of kage's config.toml corvid imports; the rest
// (ui, plugins, keybindings, …) has no corvid counterpart.
type kageConfig struct {
	Provider struct {
		DefaultModel string `toml:"default_model"`
	} `toml:"provider"`
	// Providers keeps kage's [providers] tables as written: corvid reads
	// the same shape (config.ProviderSettings).
	Providers map[string]any `toml:"providers"`
	MCP       struct {
		Servers map[string]kageMCPServer `toml:"servers"`
	} `toml:"mcp"`
	Permissions struct {
		Tools map[string]kageToolRule `toml:"tools"`
		MCP   map[string]string       `toml:"mcp"`
	} `toml:"permissions"`
}

type kageMCPServer struct {
	Command  string            `toml:"command"`
	Args     []string          `toml:"args"`
	Env      map[string]string `toml:"env"`
	URL      string            `toml:"url"`
	Headers  map[string]string `toml:"headers"`
	Disabled bool              `toml:"disabled"`
}

type kageToolRule struct {
	Default string   `toml:"default"`
	Allow   []string `toml:"allow"`
	Deny    []string `toml:"deny"`
}

// kagePaths are kage's config file and credential store: its docs'
// ~/.config/kage/config.toml and ~/.local/share/kage/auth.json, under
// XDG_CONFIG_HOME and XDG_DATA_HOME when set.
func kagePaths(env config.Env) (cfg, auth string) {
	home := env.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	cfgRoot, dataRoot := env.Getenv("XDG_CONFIG_HOME"), env.Getenv("XDG_DATA_HOME")
	if cfgRoot == "" {
		cfgRoot = filepath.Join(home, ".config")
	}
	if dataRoot == "" {
		dataRoot = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(cfgRoot, "kage", "config.toml"), filepath.Join(dataRoot, "kage", "auth.json")
}

// kageKeys reads kage's auth.json (format 1: bare strings; 2: tagged
// objects): the API keys by provider, and the providers whose OAuth
// records cannot be copied.
func kageKeys(path string) (keys map[string]string, oauth []string, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var f struct {
		Providers map[string]json.RawMessage `json:"providers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, nil, fmt.Errorf("parse %s: %w", path, err)
	}
	keys = map[string]string{}
	for name, raw := range f.Providers {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			keys[name] = s
			continue
		}
		var c struct{ Type, Key string }
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, nil, fmt.Errorf("parse %s: provider %s: %w", path, name, err)
		}
		switch c.Type {
		case "api_key":
			keys[name] = c.Key
		default:
			oauth = append(oauth, name)
		}
	}
	sort.Strings(oauth)
	return keys, oauth, nil
}

// kageImport is what will be copied, and the lines that say so.
type kageImport struct {
	model       string
	providers   map[string]any
	mcp         map[string]map[string]any
	allow, ask  []string
	deny        []string
	keys        map[string]string
	plan, skips []string
}

func planKageImport(cfgPath, authPath string) (*kageImport, error) {
	imp := &kageImport{providers: map[string]any{}, mcp: map[string]map[string]any{}}
	var kc kageConfig
	switch b, err := os.ReadFile(cfgPath); {
	case err == nil:
		if _, err := toml.Decode(string(b), &kc); err != nil {
			return nil, fmt.Errorf("parse %s: %w", cfgPath, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	keys, oauth, err := kageKeys(authPath)
	if err != nil {
		return nil, err
	}
	if m := kc.Provider.DefaultModel; m != "" {
		imp.model = m
		imp.plan = append(imp.plan, "model "+m)
	}
	for _, name := range sortedNames(kc.Providers) {
		imp.providers[name] = kc.Providers[name]
		if name == "custom" {
			cs, _ := kc.Providers[name].(map[string]any)
			for _, c := range sortedNames(cs) {
				imp.plan = append(imp.plan, "provider "+c+" (custom): "+describeProvider(cs[c]))
			}
			continue
		}
		imp.plan = append(imp.plan, "provider "+name+" (override): "+describeProvider(kc.Providers[name]))
	}
	for _, name := range sortedNames(kc.MCP.Servers) {
		s := kc.MCP.Servers[name]
		if s.Disabled {
			imp.skips = append(imp.skips, "MCP server "+name+" (disabled in kage)")
			continue
		}
		m := map[string]any{}
		what := s.URL
		if s.Command != "" {
			m["command"], what = s.Command, strings.Join(append([]string{s.Command}, s.Args...), " ")
			if len(s.Args) > 0 {
				m["args"] = s.Args
			}
		} else {
			m["url"] = s.URL
		}
		if len(s.Env) > 0 {
			m["env"] = s.Env
			what += " (env " + strings.Join(sortedNames(s.Env), ", ") + ")"
		}
		if len(s.Headers) > 0 {
			m["headers"] = s.Headers
			what += " (headers " + strings.Join(sortedNames(s.Headers), ", ") + ")"
		}
		imp.mcp[name] = m
		imp.plan = append(imp.plan, "MCP server "+name+": "+what)
	}
	imp.permissions(kc)
	imp.keys = map[string]string{}
	for _, name := range sortedNames(keys) {
		if strings.TrimSpace(keys[name]) == "" {
			continue
		}
		to := name
		if p, ok := config.LookupProvider(name); ok {
			to = p.Name
		}
		imp.keys[to] = keys[name]
		imp.plan = append(imp.plan, "key of "+to+" (stored by kage) → corvid's credential store")
	}
	for _, name := range oauth {
		imp.skips = append(imp.skips, "OAuth login of "+name+" (log in again with `corvid auth login "+name+"`)")
	}
	return imp, nil
}

// permissions turns kage's [permissions] into corvid's rule lists: a
// tool's allow/deny patterns (kage matches a shell command line; so does
// corvid's shell(PATTERN)), its default, and [permissions.mcp] server
// actions as rules on the server's tools (SERVER__*: both name MCP tools
// SERVER__TOOL).
func (imp *kageImport) permissions(kc kageConfig) {
	add := func(list *[]string, kind, rule string) {
		*list = append(*list, rule)
		imp.plan = append(imp.plan, "permission "+kind+" "+rule)
	}
	for _, name := range sortedNames(kc.Permissions.Tools) {
		r := kc.Permissions.Tools[name]
		tool := name
		if tool == "bash" {
			tool = "shell"
		}
		patterns := len(r.Allow)+len(r.Deny) > 0
		if patterns && tool != "shell" {
			imp.skips = append(imp.skips, fmt.Sprintf("patterns of [permissions.tools.%s] (kage matches them against the call's JSON; corvid's %s(PATTERN) matches paths or URLs)", name, tool))
		} else {
			for _, p := range r.Deny {
				add(&imp.deny, "deny", tool+"("+p+")")
			}
			for _, p := range r.Allow {
				add(&imp.allow, "allow", tool+"("+p+")")
			}
		}
		switch r.Default {
		case "ask":
			add(&imp.ask, "ask", tool)
		case "deny":
			add(&imp.deny, "deny", tool)
		case "allow":
			if tool == "shell" || strings.Contains(tool, "__") {
				add(&imp.allow, "allow", tool)
			}
		}
	}
	for _, server := range sortedNames(kc.Permissions.MCP) {
		rule := server + "__*"
		if server == "*" {
			rule = "*__*"
		}
		switch kc.Permissions.MCP[server] {
		case "allow":
			add(&imp.allow, "allow", rule)
		case "deny":
			add(&imp.deny, "deny", rule)
		case "ask":
			add(&imp.ask, "ask", rule)
		}
	}
}

// describeProvider names what a [providers] table sets, keys by
// reference and header names only (their values may be secrets).
func describeProvider(v any) string {
	m, _ := v.(map[string]any)
	var parts []string
	for _, k := range []string{"kind", "api", "base_url"} {
		if s, ok := m[k].(string); ok && s != "" {
			parts = append(parts, k+" "+s)
		}
	}
	if s, ok := m["api_key_env"].(string); ok {
		if s == "" {
			parts = append(parts, "no key")
		} else {
			parts = append(parts, "key from $"+s)
		}
	}
	if h, ok := m["headers"].(map[string]any); ok {
		parts = append(parts, "headers "+strings.Join(sortedNames(h), ", "))
	}
	if ms, ok := m["models"].([]map[string]any); ok {
		var ids []string
		for _, e := range ms {
			ids = append(ids, fmt.Sprint(e["id"]))
		}
		parts = append(parts, "models "+strings.Join(ids, ", "))
	}
	if len(parts) == 0 {
		return "as in kage"
	}
	return strings.Join(parts, "; ")
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func runImportKage(env config.Env, yes bool, in io.Reader, out io.Writer) error {
	cfgPath, authPath := kagePaths(env)
	imp, err := planKageImport(cfgPath, authPath)
	if err != nil {
		return err
	}
	target := filepath.Join(config.ConfigDir(env), "config.toml")
	if len(imp.plan) == 0 {
		fmt.Fprintf(out, "Nothing to import: no kage settings in %s or keys in %s.\n", cfgPath, authPath)
		return nil
	}
	fmt.Fprintf(out, "From %s and %s, corvid will copy:\n", cfgPath, authPath)
	for _, l := range imp.plan {
		fmt.Fprintln(out, "  "+l)
	}
	for _, l := range imp.skips {
		fmt.Fprintln(out, "  not copied: "+l)
	}
	fmt.Fprintf(out, "into %s (an existing file is kept as config.toml.bak; settings it already has win).\n", target)
	if !yes {
		fmt.Fprint(out, "Write? [y/N] ")
		line, _ := bufio.NewReader(in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(out, "Nothing written.")
			return nil
		}
	}
	if err := writeImported(target, imp); err != nil {
		return err
	}
	if _, err := config.Load(env, ""); err != nil {
		return fmt.Errorf("the imported config does not load (restore %s.bak if needed): %w", target, err)
	}
	for _, name := range sortedNames(imp.keys) {
		where, err := config.Login(env, name, imp.keys[name])
		if err != nil {
			return fmt.Errorf("store the key of %s: %w", name, err)
		}
		fmt.Fprintf(out, "Stored the key of %s (%s).\n", name, where)
	}
	fmt.Fprintf(out, "Wrote %s.\n", target)
	return nil
}

// writeImported merges imp into the corvid config at target: what the
// file already sets is kept, kage's tables and rules are added.
func writeImported(target string, imp *kageImport) error {
	doc := map[string]any{}
	old, err := os.ReadFile(target)
	switch {
	case err == nil:
		if _, err := toml.Decode(string(old), &doc); err != nil {
			return fmt.Errorf("parse %s: %w", target, err)
		}
		if err := os.WriteFile(target+".bak", old, 0o600); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if _, ok := doc["model"]; !ok && imp.model != "" {
		doc["model"] = imp.model
	}
	mergeTable(doc, "providers", imp.providers)
	mcp := map[string]any{}
	for k, v := range imp.mcp {
		mcp[k] = v
	}
	mergeTable(doc, "mcp_servers", mcp)
	perms, _ := doc["permissions"].(map[string]any)
	if perms == nil {
		perms = map[string]any{}
	}
	for _, l := range []struct {
		key   string
		rules []string
	}{{"allow", imp.allow}, {"ask", imp.ask}, {"deny", imp.deny}} {
		if len(l.rules) == 0 {
			continue
		}
		var have []string
		if cur, ok := perms[l.key].([]any); ok {
			for _, r := range cur {
				have = append(have, fmt.Sprint(r))
			}
		}
		for _, r := range l.rules {
			if !slices.Contains(have, r) {
				have = append(have, r)
			}
		}
		perms[l.key] = have
	}
	if len(perms) > 0 {
		doc["permissions"] = perms
	}
	var buf bytes.Buffer
	buf.WriteString("# corvid config; kage settings added by `corvid import kage`.\n")
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return err
	}
	return os.WriteFile(target, buf.Bytes(), 0o600)
}

// mergeTable adds add's entries to doc[key], keeping those doc has.
func mergeTable(doc map[string]any, key string, add map[string]any) {
	if len(add) == 0 {
		return
	}
	cur, _ := doc[key].(map[string]any)
	if cur == nil {
		cur = map[string]any{}
	}
	for k, v := range add {
		if _, ok := cur[k]; ok {
			if k == "custom" { // kage's [providers.custom.*]: merge one level down
				mergeTable(cur, k, v.(map[string]any))
			}
			continue
		}
		cur[k] = v
	}
	doc[key] = cur
}
