package commands

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/corvid-agent/corvid/internal/config"
)

// Limits that keep a stray huge folder from slowing every session start.
const (
	maxFileSize     = 256 << 10 // a command or SKILL.md larger than this is skipped
	maxFilesPerRoot = 2000      // files looked at under one commands folder
	maxDescription  = 200       // runes of a description taken from the body
)

// ProjectDirs returns the directories from cwd up to the repository root
// (the nearest ancestor holding a .git entry), cwd first. Outside a
// repository it is cwd alone, so a stray .corvid folder in $HOME is not
// picked up by every project below it.
func ProjectDirs(cwd string) []string {
	cwd = filepath.Clean(cwd)
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	var dirs []string
	for dir := cwd; ; {
		dirs = append(dirs, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dirs
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return []string{cwd}
		}
		dir = parent
	}
}

// root is one folder commands or skills are read from.
type root struct {
	dir    string
	source string // SourceProject or SourceUser
	skills bool   // a skills folder (SKILL.md per subfolder), else a commands folder
}

// roots lists the folders Discover reads, highest precedence first: the
// project's (innermost directory first) before the user's, .corvid before
// CodeBuddy's .codebuddy before .agents; the user's corvid config dir
// before ~/.codebuddy.
func roots(cwd string, env config.Env) []root {
	var rs []root
	dirs := ProjectDirs(cwd)
	codebuddyHome := ""
	if h := env.Getenv("HOME"); h != "" {
		codebuddyHome = filepath.Join(h, ".codebuddy")
	}
	for _, d := range dirs {
		rs = append(rs,
			root{dir: filepath.Join(d, ".corvid", "commands"), source: SourceProject},
			root{dir: filepath.Join(d, ".codebuddy", "commands"), source: SourceProject})
	}
	rs = append(rs, root{dir: filepath.Join(config.ConfigDir(env), "commands"), source: SourceUser})
	if codebuddyHome != "" {
		rs = append(rs, root{dir: filepath.Join(codebuddyHome, "commands"), source: SourceUser})
	}
	for _, d := range dirs {
		rs = append(rs,
			root{dir: filepath.Join(d, ".corvid", "skills"), source: SourceProject, skills: true},
			root{dir: filepath.Join(d, ".codebuddy", "skills"), source: SourceProject, skills: true},
			root{dir: filepath.Join(d, ".agents", "skills"), source: SourceProject, skills: true})
	}
	rs = append(rs, root{dir: filepath.Join(config.ConfigDir(env), "skills"), source: SourceUser, skills: true})
	if codebuddyHome != "" {
		rs = append(rs, root{dir: filepath.Join(codebuddyHome, "skills"), source: SourceUser, skills: true})
	}
	return rs
}

// commandFiles calls fn for every markdown file under a commands folder,
// with the command name it gives ("folder:name" for a subfolder). Hidden
// files and folders are skipped; a missing folder gives nothing.
func commandFiles(dir string, fn func(path, name string, info fs.FileInfo)) {
	n := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped, not fatal
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.EqualFold(filepath.Ext(path), ".md") {
			return nil
		}
		if n++; n > maxFilesPerRoot {
			return filepath.SkipAll
		}
		info, err := os.Stat(path) // follows a symlinked file
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = strings.TrimSuffix(rel, filepath.Ext(rel))
		fn(path, strings.ReplaceAll(filepath.ToSlash(rel), "/", ":"), info)
		return nil
	})
}

// skillFiles calls fn for every <dir>/<skill>/SKILL.md (a symlinked skill
// folder counts).
func skillFiles(dir string, fn func(path string, info fs.FileInfo)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name(), "SKILL.md")
		info, err := os.Stat(path)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		fn(path, info)
	}
}

// Discover reads the custom commands and skills for a session in cwd:
//
//   - commands: .corvid/commands/ and CodeBuddy's .codebuddy/commands/ in
//     cwd and each parent up to the repository root, then
//     ConfigDir(env)/commands/ and ~/.codebuddy/commands/;
//   - skills: .corvid/skills/, .codebuddy/skills/ and .agents/skills/ in
//     the same project directories, then ConfigDir(env)/skills/ and
//     ~/.codebuddy/skills/.
//
// On a name clash the project wins over the user and an inner directory
// over an outer one. A custom command named like a built-in is dropped
// (with a warning), so Builtins() and cmds never overlap. Each skill is
// also returned as a Command with Source "skill", unless a command already
// has its name. Both lists are sorted by name. Problems (malformed front
// matter, unreadable or oversized files) become warnings, never a failure.
func Discover(cwd string, env config.Env) (cmds []Command, skills []Skill, warnings []string) {
	byName := map[string]bool{}
	skillNames := map[string]bool{}
	type skillText struct {
		fm   frontMatter
		body string
	}
	texts := map[string]skillText{} // by SKILL.md path
	warn := func(path, format string, args ...any) {
		warnings = append(warnings, path+": "+fmt.Sprintf(format, args...))
	}
	for _, r := range roots(cwd, env) {
		if r.skills {
			skillFiles(r.dir, func(path string, info fs.FileInfo) {
				s, fm, body, ok := readSkill(path, info, warn)
				if !ok || skillNames[s.Name] {
					return
				}
				skillNames[s.Name] = true
				texts[path] = skillText{fm, body}
				skills = append(skills, s)
			})
			continue
		}
		commandFiles(r.dir, func(path, name string, info fs.FileInfo) {
			if byName[name] {
				return
			}
			if !validName(name) {
				warn(path, "%q cannot be a command name (use letters, digits, - _ .)", name)
				return
			}
			if IsBuiltin(name) {
				warn(path, "/%s is a built-in command; this file is ignored", name)
				return
			}
			c, ok := readCommand(path, info, warn)
			if !ok {
				return
			}
			c.Name, c.Source = name, r.source
			byName[name] = true
			cmds = append(cmds, c)
		})
	}
	for _, s := range skills {
		if byName[s.Name] || IsBuiltin(s.Name) {
			warn(s.Path, "skill %q is not offered as /%s: a command has that name", s.Name, s.Name)
			continue
		}
		fm, body := texts[s.Path].fm, texts[s.Path].body
		byName[s.Name] = true
		cmds = append(cmds, Command{
			Name: s.Name, Description: s.Description, ArgumentHint: fm["argument-hint"],
			Source: SourceSkill, Path: s.Path, Body: body, Model: fm["model"], AllowedTools: s.AllowedTools,
		})
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	sort.Slice(skills, func(i, j int) bool { return skills[i].Name < skills[j].Name })
	return cmds, skills, warnings
}

type warnFunc func(path, format string, args ...any)

// readBody reads a command or skill file, or reports false.
func readBody(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return string(b), true
}

func readCommand(path string, info fs.FileInfo, warn warnFunc) (Command, bool) {
	if info.Size() > maxFileSize {
		warn(path, "larger than %d KiB; ignored", maxFileSize>>10)
		return Command{}, false
	}
	text, ok := readBody(path)
	if !ok {
		warn(path, "cannot be read; ignored")
		return Command{}, false
	}
	fm, body, problems := splitFrontMatter(text)
	for _, p := range problems {
		warn(path, "%s", p)
	}
	c := Command{
		Path:         path,
		Body:         body,
		Description:  fm["description"],
		ArgumentHint: fm["argument-hint"],
		Model:        fm["model"],
		AllowedTools: fm.list("allowed-tools"),
	}
	if c.Description == "" {
		c.Description = firstLine(body)
	}
	return c, true
}

func readSkill(path string, info fs.FileInfo, warn warnFunc) (s Skill, fm frontMatter, body string, ok bool) {
	if info.Size() > maxFileSize {
		warn(path, "larger than %d KiB; ignored", maxFileSize>>10)
		return Skill{}, nil, "", false
	}
	text, ok := readBody(path)
	if !ok {
		warn(path, "cannot be read; ignored")
		return Skill{}, nil, "", false
	}
	fm, body, problems := splitFrontMatter(text)
	for _, p := range problems {
		warn(path, "%s", p)
	}
	if fm.bool("disable") || fm.bool("disabled") {
		return Skill{}, nil, "", false
	}
	dir := filepath.Dir(path)
	s = Skill{
		Name:         fm["name"],
		Description:  fm["description"],
		Path:         path,
		Dir:          dir,
		AllowedTools: fm.list("allowed-tools"),
	}
	if s.Name == "" {
		s.Name = filepath.Base(dir)
	}
	if !validName(s.Name) || strings.Contains(s.Name, ":") {
		warn(path, "%q cannot be a skill name (use letters, digits, - _ .); ignored", s.Name)
		return Skill{}, nil, "", false
	}
	if s.Description == "" {
		warn(path, "no description in the front matter; the model will not know when to use this skill")
	}
	return s, fm, body, true
}

// firstLine is a description made from a body that has none: its first
// non-empty line, without markdown heading marks, shortened.
func firstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		if l == "" {
			continue
		}
		if r := []rune(l); len(r) > maxDescription {
			l = strings.TrimRightFunc(string(r[:maxDescription-1]), unicode.IsSpace) + "…"
		}
		return l
	}
	return ""
}
