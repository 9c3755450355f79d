package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Layers, lowest first: the user's $XDG_CONFIG_HOME/corvid/config.toml, the
// project's .corvid/config.toml (nearest to cwd, walking up), then
// CORVID_MODEL, then command-line flags. Load merges the two files;
// ResolveModel adds the environment and the flag.
//
// A project file comes with the repository, so until the user has run
// `corvid trust` in it, it may only make corvid stricter: its allow rules,
// custom providers and MCP servers are ignored (and listed in
// File.Ignored), while its ask/deny rules, model and timeout apply.

// CustomProvider is an OpenAI-compatible endpoint defined in config.toml:
//
//	[custom.myproxy]
//	base_url = "https://llm.example.com/v1"
//	key_var  = "MYPROXY_API_KEY"   # optional: keyless when empty
//	api      = "chat"              # or "responses"
type CustomProvider struct {
	BaseURL string `toml:"base_url"`
	KeyVar  string `toml:"key_var"`
	API     string `toml:"api"`
	Title   string `toml:"title"`
	Model   string `toml:"model"` // default model id, optional
}

// Permissions are rule patterns (see internal/permission) by decision.
type Permissions struct {
	Allow []string `toml:"allow"`
	Ask   []string `toml:"ask"`
	Deny  []string `toml:"deny"`
}

// MCPServer is a configured MCP server: a command (stdio) or a URL (http).
type MCPServer struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// Type is "stdio", "http" or "sse"; empty means stdio for a command and
	// http for a URL.
	Type string `toml:"type"`
	// StartupTimeout bounds the server's start (e.g. "90s"); 0: the
	// default (60s).
	StartupTimeout time.Duration `toml:"startup_timeout"`
}

// File is the merged configuration of the user and project files.
type File struct {
	Model              string                    `toml:"model"`
	InteractionTimeout time.Duration             `toml:"interaction_timeout"`
	Custom             map[string]CustomProvider `toml:"custom"`
	// Providers are [providers.NAME] tables (kage's shape): overrides of
	// built-in providers and custom providers of any API family; see
	// ProviderSettings. kage's [providers.custom.NAME] land here too.
	Providers    map[string]ProviderSettings `toml:"-"`
	RawProviders map[string]toml.Primitive   `toml:"providers"` // as read; decoded into Providers
	Permissions  Permissions                 `toml:"permissions"`
	MCPServers   map[string]MCPServer        `toml:"mcp_servers"`
	// DefaultMode is the permission mode new sessions start in ("" =
	// default). An untrusted project may only pick a stricter one.
	DefaultMode string `toml:"default_mode"`
	// Sandbox confines shell commands: "off", "workspace-write" or
	// "read-only" ("" = off). SandboxNetwork lets sandboxed commands use TCP.
	// An untrusted project may only make the sandbox stricter.
	Sandbox        string `toml:"sandbox"`
	SandboxNetwork bool   `toml:"sandbox_network"`
	// PassEnv names variables children inherit although corvid withholds
	// them by default (provider keys, CORVID_*); user config only.
	PassEnv []string `toml:"pass_env"`
	// Identity is who the user is to hosts that ask (CodeBuddy's
	// authenticate userinfo); user config only.
	Identity Identity `toml:"identity"`
	// Store chooses the session store ("sqlite:PATH" or a postgres://
	// URL; see SessionStore); user config only.
	Store string `toml:"store"`
	// CodeMode bounds codeMode scripts (codemode.go).
	CodeMode CodeModeLimits `toml:"code_mode"`
	// TUI holds the terminal UI's settings (tui.go); user config only.
	TUI TUI `toml:"tui"`
	// OnDisconnect is `corvid serve`'s policy for the turns of a client
	// that goes away ("continue" or "cancel"; serve.go); user config only.
	OnDisconnect string `toml:"on_disconnect"`

	// UserPath and ProjectPath are the files that were read ("" = none).
	UserPath    string `toml:"-"`
	ProjectPath string `toml:"-"`
	// ProjectDir is the directory holding .corvid/ ("" = none found).
	ProjectDir string `toml:"-"`
	// ProjectTrusted says whether ProjectDir is in the trusted list, so its
	// file could loosen permissions and add providers and MCP servers.
	ProjectTrusted bool `toml:"-"`
	// Ignored lists what an untrusted project file asked for and did not
	// get, in words fit for a warning.
	Ignored []string `toml:"-"`
}

// DefaultInteractionTimeout is how long a question to a host that cannot
// answer waits before it is denied.
const DefaultInteractionTimeout = time.Hour

// ProjectConfigName is the project file, relative to the project directory.
var ProjectConfigName = filepath.Join(".corvid", "config.toml")

// Load reads the user config and the project config found from cwd upward,
// and merges them. Missing files are not an error; a malformed one is.
func Load(env Env, cwd string) (*File, error) {
	userPath := UserConfigPath(env)
	b, err := os.ReadFile(userPath)
	if errors.Is(err, fs.ErrNotExist) {
		return LoadWithUser(env, cwd, nil)
	}
	if err != nil {
		return nil, err
	}
	return LoadWithUser(env, cwd, b)
}

// UserConfigPath is the user's config.toml.
func UserConfigPath(env Env) string { return filepath.Join(ConfigDir(env), "config.toml") }

// LoadWithUser is Load with the user config's content given (nil: there is
// none) instead of read from UserConfigPath: a daemon keeps its last good
// read of the file and reads it again only when told to (SIGHUP).
func LoadWithUser(env Env, cwd string, userContent []byte) (*File, error) {
	f := &File{InteractionTimeout: DefaultInteractionTimeout}
	userPath := UserConfigPath(env)
	if userContent != nil {
		user, err := parseFile(userContent, userPath)
		if err != nil {
			return nil, err
		}
		f.UserPath = userPath
		if err := f.merge(user, true, ""); err != nil {
			return nil, fmt.Errorf("%s: %w", userPath, err)
		}
	}

	dir, projPath := findProject(cwd)
	if projPath == "" || projPath == userPath {
		return f, nil
	}
	// One read serves both the trust check and the parse, so the content
	// that is trusted is the content that is used.
	b, err := os.ReadFile(projPath)
	if err != nil {
		return nil, err
	}
	proj, err := parseFile(b, projPath)
	if err != nil {
		return nil, err
	}
	f.ProjectPath, f.ProjectDir = projPath, dir
	state := TrustOf(env, dir, b)
	f.ProjectTrusted = state == Trusted
	if state == Changed {
		f.Ignored = append(f.Ignored, fmt.Sprintf("%s changed since `corvid trust` was run for it: its allow rules, custom providers and MCP servers are ignored until you review it and run `corvid trust` in %s again", projPath, dir))
	}
	if err := f.merge(proj, f.ProjectTrusted, projPath); err != nil {
		return nil, fmt.Errorf("%s: %w", projPath, err)
	}
	return f, nil
}

func parseFile(b []byte, path string) (*File, error) {
	var f File
	md, err := toml.Decode(string(b), &f)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if err := decodeProviders(md, &f); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
			if near := nearestKey(k); near != "" {
				keys[i] += " (did you mean " + near + "?)"
			}
		}
		return nil, fmt.Errorf("parse %s: unknown keys %s", path, strings.Join(keys, ", "))
	}
	for _, name := range sortedKeys(f.Providers) {
		s := f.Providers[name]
		if err := validateProvider(name, &s); err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		f.Providers[name] = s
	}
	for name := range f.Custom {
		if _, ok := f.Providers[name]; ok {
			return nil, fmt.Errorf("parse %s: provider %q is defined both as [custom.%s] and [providers.%s]; keep one", path, name, name, name)
		}
	}
	return &f, nil
}

// findProject walks from cwd up to the root looking for .corvid/config.toml.
func findProject(cwd string) (dir, path string) {
	if cwd == "" {
		return "", ""
	}
	d, err := filepath.Abs(cwd)
	if err != nil {
		return "", ""
	}
	for {
		p := filepath.Join(d, ProjectConfigName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return d, p
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
		}
		d = parent
	}
}

// merge lays o over f. trusted says whether o may loosen permissions and
// add custom providers and MCP servers; from names o's file in warnings.
func (f *File) merge(o *File, trusted bool, from string) error {
	switch {
	case o.Model == "":
	case !trusted && strings.HasPrefix(strings.TrimSpace(o.Model), ScriptProvider+":"):
		// A scripted model replays a file of tool calls: the project's
		// author, not a model, would be choosing them.
		f.Ignored = append(f.Ignored, fmt.Sprintf("model %q in %s (a scripted model plays tool calls from a file; run `corvid trust` in the project to allow it)", o.Model, from))
	default:
		f.Model = o.Model
	}
	if o.InteractionTimeout < 0 {
		return fmt.Errorf("interaction_timeout must not be negative")
	}
	if o.InteractionTimeout > 0 {
		f.InteractionTimeout = o.InteractionTimeout
	}
	if err := f.mergeSafety(o, trusted, from); err != nil {
		return err
	}
	if o.Identity != (Identity{}) {
		if from == "" {
			f.Identity = o.Identity
		} else {
			f.Ignored = append(f.Ignored, fmt.Sprintf("[identity] in %s ([identity] is read from the user config only)", from))
		}
	}
	if len(o.TUI.Keys) > 0 || o.TUI.Theme != "" {
		if from == "" {
			f.TUI = o.TUI
		} else {
			f.Ignored = append(f.Ignored, fmt.Sprintf("[tui] in %s ([tui] is read from the user config only)", from))
		}
	}
	if err := f.mergeCodeMode(o, from); err != nil {
		return err
	}
	if err := f.mergeServe(o, from); err != nil {
		return err
	}
	if o.Store != "" {
		if from == "" {
			f.Store = o.Store
		} else {
			f.Ignored = append(f.Ignored, fmt.Sprintf("store in %s (store is read from the user config only)", from))
		}
	}
	if len(o.PassEnv) > 0 {
		if from == "" {
			f.PassEnv = append(f.PassEnv, o.PassEnv...)
		} else {
			f.Ignored = append(f.Ignored, fmt.Sprintf("pass_env %q in %s (pass_env is read from the user config only)", o.PassEnv, from))
		}
	}
	f.Permissions.Ask = append(f.Permissions.Ask, o.Permissions.Ask...)
	f.Permissions.Deny = append(f.Permissions.Deny, o.Permissions.Deny...)
	ignore := func(what string) {
		f.Ignored = append(f.Ignored, fmt.Sprintf("%s in %s (run `corvid trust` in the project to allow it)", what, from))
	}
	if len(o.Permissions.Allow) > 0 {
		if trusted {
			f.Permissions.Allow = append(f.Permissions.Allow, o.Permissions.Allow...)
		} else {
			ignore(fmt.Sprintf("allow rules %q", o.Permissions.Allow))
		}
	}
	return f.mergeAdditions(o, trusted, ignore)
}

// mergeSafety lays o's permission mode and sandbox settings over f: an
// untrusted file may only make them stricter.
func (f *File) mergeSafety(o *File, trusted bool, from string) error {
	if o.DefaultMode != "" {
		if trusted || !loosensMode(o.DefaultMode) {
			f.DefaultMode = o.DefaultMode
		} else {
			f.Ignored = append(f.Ignored, fmt.Sprintf("default_mode %q in %s (run `corvid trust` in the project to allow it)", o.DefaultMode, from))
		}
	}
	if o.Sandbox != "" {
		r, ok := sandboxRank[o.Sandbox]
		switch {
		case !ok:
			return fmt.Errorf("sandbox must be \"off\", \"workspace-write\" or \"read-only\", not %q", o.Sandbox)
		case trusted || r >= sandboxRank[f.Sandbox]:
			f.Sandbox = o.Sandbox
		default:
			f.Ignored = append(f.Ignored, fmt.Sprintf("sandbox %q in %s (run `corvid trust` in the project to allow it)", o.Sandbox, from))
		}
	}
	if o.SandboxNetwork {
		if trusted {
			f.SandboxNetwork = true
		} else {
			f.Ignored = append(f.Ignored, fmt.Sprintf("sandbox_network in %s (run `corvid trust` in the project to allow it)", from))
		}
	}
	return nil
}

// mergeAdditions adds o's custom providers, provider settings and MCP
// servers to f, when o is trusted.
func (f *File) mergeAdditions(o *File, trusted bool, ignore func(string)) error {
	for _, name := range sortedKeys(o.Custom) {
		c := o.Custom[name]
		if err := validateCustom(name, &c); err != nil {
			return err
		}
		if !trusted {
			ignore(fmt.Sprintf("custom provider %q", name))
			continue
		}
		if f.Custom == nil {
			f.Custom = map[string]CustomProvider{}
		}
		f.Custom[name] = c
	}
	if len(o.Providers) > 0 {
		if trusted {
			f.mergeProviders(o.Providers)
		} else {
			ignore(fmt.Sprintf("providers %q (base URLs, keys and headers)", sortedKeys(o.Providers)))
		}
	}
	for _, name := range sortedKeys(o.MCPServers) {
		s := o.MCPServers[name]
		if (s.Command == "") == (s.URL == "") {
			return fmt.Errorf("mcp_servers.%s: set exactly one of command and url", name)
		}
		if !trusted {
			ignore(fmt.Sprintf("MCP server %q", name))
			continue
		}
		if f.MCPServers == nil {
			f.MCPServers = map[string]MCPServer{}
		}
		f.MCPServers[name] = s
	}
	return nil
}

// sandboxRank orders sandbox modes from loosest to strictest.
var sandboxRank = map[string]int{"": 0, "off": 0, "workspace-write": 1, "read-only": 2}

// loosensMode reports whether a default mode runs more without asking than
// the default mode does (so an untrusted project may not choose it).
func loosensMode(m string) bool {
	m = ModeAlias(m)
	return m != "ask" && m != "plan" && m != "default" && m != "deny"
}

func validateCustom(name string, c *CustomProvider) error {
	if _, ok := LookupProvider(name); ok {
		return fmt.Errorf("custom.%s: %q is a built-in provider; pick another name", name, name)
	}
	if name == "" || strings.ContainsAny(name, ":/ \t") {
		return fmt.Errorf("custom.%s: a provider name may not contain ':', '/' or spaces", name)
	}
	if c.BaseURL == "" {
		return fmt.Errorf("custom.%s: base_url is required", name)
	}
	switch c.API {
	case "":
		c.API = APIChat
	case APIChat, APIResponses:
	default:
		return fmt.Errorf("custom.%s: api must be %q or %q, not %q", name, APIChat, APIResponses, c.API)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Provider returns a built-in provider or one of f's custom providers.
// A nil f knows only the built-ins.
func (f *File) Provider(name string) (Provider, bool) {
	if p, ok := LookupProvider(name); ok {
		if f != nil {
			if s, ok := f.Providers[p.Name]; ok {
				p = applySettings(p, s)
			}
		}
		return p, true
	}
	if f == nil {
		return Provider{}, false
	}
	if s, ok := f.Providers[name]; ok {
		return customFromSettings(name, s), true
	}
	c, ok := f.Custom[name]
	if !ok {
		return Provider{}, false
	}
	p := Provider{
		Name:         name,
		Title:        c.Title,
		API:          c.API,
		BaseURL:      c.BaseURL,
		NeedsKey:     c.KeyVar != "",
		DefaultModel: c.Model,
		Description:  "custom (" + c.BaseURL + ")",
		Custom:       true,
	}
	if p.API == "" {
		p.API = APIChat
	}
	if c.KeyVar != "" {
		p.KeyVars = []string{c.KeyVar}
	}
	return p, true
}

// AllProviders lists the built-in providers, then f's custom ones by name.
func (f *File) AllProviders() []Provider {
	if f == nil {
		return slices.Clone(Providers)
	}
	out := make([]Provider, 0, len(Providers)+len(f.Custom)+len(f.Providers))
	for _, p := range Providers {
		if s, ok := f.Providers[p.Name]; ok { // f.Provider(p.Name), without the lookup
			p = applySettings(p, s)
		}
		out = append(out, p)
	}
	var custom []string
	for name := range f.Custom {
		custom = append(custom, name)
	}
	for name := range f.Providers {
		if _, builtin := LookupProvider(name); !builtin {
			custom = append(custom, name)
		}
	}
	slices.Sort(custom)
	for _, name := range custom {
		p, _ := f.Provider(name)
		out = append(out, p)
	}
	return out
}
