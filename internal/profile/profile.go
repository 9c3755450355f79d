// Package profile reads agent profiles: corvid's own TOML profiles and
// Leviath's agent.leviath blueprints, mapped onto what corvid can honour (a
// system prompt, instructions, tool rules, a model, limits and seed regions).
// Whatever a file asks for that corvid cannot honour is named in Warnings,
// never silently dropped.
//
// Start with Resolve (a --agent NAME or PATH) and List (`corvid agents`).
package profile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/corvid-agent/corvid/internal/config"
)

// Profile is an agent as corvid runs it.
type Profile struct {
	Name        string
	Description string
	Path        string // the file it was read from
	Source      string // "project", "user", "path" or "cwd"
	Format      string // "corvid" or "leviath"

	Model string // provider:model, the first of Models; "" = the launch default
	// Models is the ordered list a Leviath stage names (the first
	// available wins); a corvid profile's model is a list of one.
	// ModelFallback says whether the launch default may stand in when
	// none is available (Leviath's allow_user_default).
	Models        []string
	ModelFallback bool
	System        string // replaces the base system prompt; "" = the default
	Instructions  string // added to the system prompt
	Allow         []string
	Ask           []string
	Deny          []string

	MaxDepth           int           // sub-agent tree depth; 0 = default
	InteractionTimeout time.Duration // 0 = the config's
	MaxTurnRequests    int           // model calls per turn; 0 = default

	Seeds    []Seed
	Warnings []string

	// Trusted says whether the file's seed commands may run: a profile of
	// the user's own config dir or named by path on the launch line is
	// trusted; one that came with a project (its .corvid/agents/, or a
	// session cwd's agent.leviath) only once `corvid trust` accepted the
	// file with exactly this content. Untrusted says why not, for the
	// refused region.
	Trusted   bool
	Untrusted string

	promptFile string // a corvid profile's system_prompt_file, resolved
}

// Seed fills a named region of the context when the agent spawns.
type Seed struct {
	Region  string
	Command string // run with sh -c in the session cwd
	File    string // read, relative to the session cwd
	Text    string // literal text
}

// corvidFile is the TOML of a corvid profile.
type corvidFile struct {
	Name             string `toml:"name"`
	Description      string `toml:"description"`
	Model            string `toml:"model"`
	SystemPrompt     string `toml:"system_prompt"`
	SystemPromptFile string `toml:"system_prompt_file"`
	Instructions     string `toml:"instructions"`
	Permissions      struct {
		Allow []string `toml:"allow"`
		Ask   []string `toml:"ask"`
		Deny  []string `toml:"deny"`
	} `toml:"permissions"`
	Limits struct {
		MaxDepth           int    `toml:"max_depth"`
		InteractionTimeout string `toml:"interaction_timeout"`
		MaxTurnRequests    int    `toml:"max_turn_requests"`
	} `toml:"limits"`
	Seed  *seedFile  `toml:"seed"`
	Seeds []seedFile `toml:"seeds"`
}

type seedFile struct {
	Region  string `toml:"region"`
	Command string `toml:"command"`
	File    string `toml:"file"`
	Text    string `toml:"text"`
}

// LeviathFile is Leviath's blueprint file name, looked for in a session's
// cwd when no --agent is given.
const LeviathFile = "agent.leviath"

// Load reads the profile at path: an agent.leviath (or any *.leviath) is a
// Leviath blueprint, anything else a corvid profile.
func Load(path string) (*Profile, error) {
	p, _, err := load(path)
	if err != nil {
		return nil, err
	}
	return p, p.readPromptFile("")
}

// readPromptFile reads a corvid profile's system_prompt_file. within, when
// not "", is the project a project's profile came with: its prompt file
// must lie inside it once symbolic links are resolved, or a profile that
// came with a repository could put any file the user can read (a key, a
// token) into the system prompt.
func (p *Profile) readPromptFile(within string) error {
	if p.promptFile == "" {
		return nil
	}
	path := p.promptFile
	if within != "" {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return fmt.Errorf("%s: system_prompt_file: %w", p.Path, err)
		}
		root, err := filepath.EvalSymlinks(within)
		if err != nil {
			root = within
		}
		if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
			return fmt.Errorf("%s: system_prompt_file %s lies outside the project %s: a project's profile reads its prompt from the project only", p.Path, path, within)
		}
		path = real
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: system_prompt_file: %w", p.Path, err)
	}
	p.System = string(b)
	return nil
}

// load reads and parses the profile at path, and returns the bytes it
// parsed, so the content trusted is the content used.
func load(path string) (*Profile, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var p *Profile
	if strings.HasSuffix(path, ".leviath") {
		p, err = parseLeviath(data, filepath.Dir(path))
	} else {
		p, err = parseCorvid(data, filepath.Dir(path))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	p.Path = path
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return p, data, nil
}

// judgeTrust sets Trusted for a profile read from data: the user's own
// files and launch-line paths are trusted; a project's file only as
// `corvid trust` recorded it (trustDir is where to run it).
func (p *Profile) judgeTrust(env config.Env, data []byte, trustDir string) {
	switch p.Source {
	case "user", "path":
		p.Trusted = true
		return
	}
	state := config.Untrusted
	if env != nil {
		state = config.FileTrust(env, p.Path, data)
	}
	switch state {
	case config.Trusted:
		p.Trusted = true
	case config.Changed:
		p.Untrusted = fmt.Sprintf("%s changed since `corvid trust` accepted it; review it, then run `corvid trust` in %s again", p.Path, trustDir)
	default:
		p.Untrusted = fmt.Sprintf("%s came with the project and is not trusted; review it, then run `corvid trust` in %s", p.Path, trustDir)
	}
}

func parseCorvid(data []byte, dir string) (*Profile, error) {
	var f corvidFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, err
	}
	p := &Profile{Format: "corvid", Name: f.Name, Description: f.Description, Model: f.Model, Models: nonEmpty(f.Model),
		System: f.SystemPrompt, Instructions: f.Instructions,
		Allow: f.Permissions.Allow, Ask: f.Permissions.Ask, Deny: f.Permissions.Deny,
		MaxDepth: f.Limits.MaxDepth, MaxTurnRequests: f.Limits.MaxTurnRequests}
	if f.SystemPromptFile != "" {
		p.promptFile = resolve(dir, f.SystemPromptFile) // read once the source is known (readPromptFile)
	}
	if f.Limits.InteractionTimeout != "" {
		d, err := time.ParseDuration(f.Limits.InteractionTimeout)
		if err != nil {
			return nil, fmt.Errorf("limits.interaction_timeout: %w", err)
		}
		p.InteractionTimeout = d
	}
	seeds := f.Seeds
	if f.Seed != nil {
		seeds = append([]seedFile{*f.Seed}, seeds...)
	}
	for i, s := range seeds {
		if s.Region == "" {
			s.Region = fmt.Sprintf("seed%d", i+1)
		}
		p.Seeds = append(p.Seeds, Seed{Region: s.Region, Command: s.Command, File: s.File, Text: s.Text})
	}
	for _, k := range md.Undecoded() {
		p.Warnings = append(p.Warnings, fmt.Sprintf("unknown key %q is ignored", k.String()))
	}
	return p, nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func resolve(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// Dir is one place profiles are found.
type Dir struct {
	Path   string
	Source string // "project" or "user"
}

// project is the project directory of a "project" Dir (the one holding
// .corvid/), where `corvid trust` is run.
func (d Dir) project() string { return filepath.Dir(filepath.Dir(d.Path)) }

// confine is where a profile of d may read its prompt file from: its
// project, for a project's profile; anywhere ("") for the user's own.
func (d Dir) confine() string {
	if d.Source == "project" {
		return d.project()
	}
	return ""
}

// Dirs are where named profiles are found, project first: .corvid/agents/
// of a trusted project, then the user's config dir.
func Dirs(env config.Env, file *config.File) []Dir {
	var out []Dir
	if file != nil && file.ProjectDir != "" && file.ProjectTrusted {
		out = append(out, Dir{Path: filepath.Join(file.ProjectDir, ".corvid", "agents"), Source: "project"})
	}
	return append(out, Dir{Path: filepath.Join(config.ConfigDir(env), "agents"), Source: "user"})
}

// ErrNotFound is returned by Resolve for a name no directory holds.
var ErrNotFound = errors.New("no such agent")

// IsPath says whether Resolve reads nameOrPath as a path rather than a
// name from Dirs.
func IsPath(nameOrPath string) bool {
	return strings.ContainsAny(nameOrPath, `/\`) || strings.ContainsRune(nameOrPath, os.PathSeparator) ||
		strings.HasSuffix(nameOrPath, ".toml") || strings.HasSuffix(nameOrPath, ".leviath")
}

// Resolve finds --agent NAME|PATH: a path (IsPath) is read as is; a name
// is NAME.toml or NAME.leviath (or NAME/agent.leviath) in Dirs.
func Resolve(env config.Env, file *config.File, nameOrPath string) (*Profile, error) {
	if IsPath(nameOrPath) {
		path := nameOrPath
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			path = filepath.Join(path, LeviathFile)
		}
		p, data, err := load(path)
		if err != nil {
			return nil, err
		}
		p.Source = "path"
		p.judgeTrust(env, data, filepath.Dir(path))
		if err := p.readPromptFile(""); err != nil {
			return nil, err
		}
		return p, nil
	}
	for _, d := range Dirs(env, file) {
		for _, c := range []string{nameOrPath + ".toml", nameOrPath + ".leviath", filepath.Join(nameOrPath, LeviathFile)} {
			path := filepath.Join(d.Path, c)
			if _, err := os.Stat(path); err != nil {
				continue
			}
			p, data, err := load(path)
			if err != nil {
				return nil, err
			}
			p.Source = d.Source
			p.judgeTrust(env, data, d.project())
			if err := p.readPromptFile(d.confine()); err != nil {
				return nil, err
			}
			return p, nil
		}
	}
	var where []string
	for _, d := range Dirs(env, file) {
		where = append(where, d.Path)
	}
	return nil, fmt.Errorf("%w %q: looked for %s.toml and %s.leviath in %s", ErrNotFound, nameOrPath, nameOrPath, nameOrPath, strings.Join(where, ", "))
}

// InDir returns the agent.leviath of dir, or nil if it has none. It came
// with the directory, so its seed commands run only once it is trusted.
func InDir(env config.Env, dir string) (*Profile, error) {
	path := filepath.Join(dir, LeviathFile)
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	p, data, err := load(path)
	if err != nil {
		return nil, err
	}
	p.Source = "cwd"
	p.judgeTrust(env, data, dir)
	return p, nil
}

// TrustCandidates lists the files `corvid trust` in dir accepts along with
// its config: dir's agent.leviath and the profiles in dir/.corvid/agents/.
func TrustCandidates(dir string) []string {
	var out []string
	if st, err := os.Stat(filepath.Join(dir, LeviathFile)); err == nil && st.Mode().IsRegular() {
		out = append(out, filepath.Join(dir, LeviathFile))
	}
	agents := filepath.Join(dir, ".corvid", "agents")
	entries, _ := os.ReadDir(agents)
	for _, e := range entries {
		path := filepath.Join(agents, e.Name())
		switch {
		case e.IsDir():
			path = filepath.Join(path, LeviathFile)
		case !strings.HasSuffix(e.Name(), ".toml") && !strings.HasSuffix(e.Name(), ".leviath"):
			continue
		}
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			out = append(out, path)
		}
	}
	return out
}

// List returns every profile found in Dirs and cwd's agent.leviath, by
// name; files that do not parse are listed with their error as a warning.
func List(env config.Env, file *config.File, cwd string) []*Profile {
	var out []*Profile
	for _, d := range Dirs(env, file) {
		entries, _ := os.ReadDir(d.Path)
		for _, e := range entries {
			path := filepath.Join(d.Path, e.Name())
			switch {
			case e.IsDir():
				path = filepath.Join(path, LeviathFile)
				if _, err := os.Stat(path); err != nil {
					continue
				}
			case !strings.HasSuffix(e.Name(), ".toml") && !strings.HasSuffix(e.Name(), ".leviath"):
				continue
			}
			p, data, err := load(path)
			if err == nil {
				err = p.readPromptFile(d.confine())
			}
			if err != nil {
				p = &Profile{Name: strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())), Path: path, Warnings: []string{err.Error()}}
			}
			p.Source = d.Source
			p.judgeTrust(env, data, d.project())
			out = append(out, p)
		}
	}
	if p, err := InDir(env, cwd); p != nil || err != nil {
		if err != nil {
			p = &Profile{Name: LeviathFile, Path: filepath.Join(cwd, LeviathFile), Warnings: []string{err.Error()}}
		}
		p.Source = "cwd"
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
