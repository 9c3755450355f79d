package commands

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/corvid-agent/corvid/internal/tool"
)

// maxSkillFiles caps the listing of a skill folder's other files.
const maxSkillFiles = 100

// LoadSkill returns what the model reads when it loads s: the whole
// SKILL.md without its front matter, then the skill's folder and the other
// files in it (relative paths, hidden ones left out), so instructions that
// mention "scripts/check.sh" can be followed.
func LoadSkill(s Skill) (string, error) {
	text, err := os.ReadFile(s.Path)
	if err != nil {
		return "", fmt.Errorf("load skill %s: %w", s.Name, err)
	}
	_, body, _ := splitFrontMatter(string(text))
	var b strings.Builder
	b.WriteString(strings.TrimSpace(body))
	fmt.Fprintf(&b, "\n\n---\nSkill folder: %s (relative paths above are relative to it)\n", s.Dir)

	var files []string
	more := false
	_ = filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == s.Dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || path == s.Path {
			return nil
		}
		if len(files) == maxSkillFiles {
			more = true
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(s.Dir, path)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(files)
	if len(files) > 0 {
		b.WriteString("Other files in the folder:\n")
		for _, f := range files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		if more {
			fmt.Fprintf(&b, "- … (more than %d files; use ls or glob to see the rest)\n", maxSkillFiles)
		}
	}
	return b.String(), nil
}

//go:embed skill.md
var skillDescription string

// SkillTool is the "skill" tool: the model passes a skill's name and reads
// LoadSkill's text. skills is called on every use, so the set can change
// while a session runs (see Watch).
func SkillTool(skills func() []Skill) tool.Tool { return skillTool{skills: skills} }

type skillTool struct{ skills func() []Skill }

type skillInput struct {
	Name string `json:"name"`
}

func (skillTool) Name() string        { return "skill" }
func (skillTool) Description() string { return skillDescription }
func (skillTool) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The skill's name, as listed"}},"required":["name"]}`)
}

func (skillTool) Describe(env *tool.Env, raw json.RawMessage) tool.Preview {
	var in skillInput
	_ = json.Unmarshal(raw, &in)
	title := "Load skill"
	if n := skillName(in.Name); n != "" {
		title += " " + n
	}
	// Loading instructions reads only corvid's own skill folders and
	// changes nothing, so it needs no permission.
	return tool.Preview{Kind: tool.KindThink, Title: title, Access: tool.AccessNone}
}

func (t skillTool) Run(ctx context.Context, env *tool.Env, call tool.Call) (tool.Result, error) {
	var in skillInput
	raw := call.Input
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return tool.ErrorResult(fmt.Sprintf("invalid input for skill: %v", err)), nil
	}
	name := skillName(in.Name)
	var known []string
	var skills []Skill
	if t.skills != nil {
		skills = t.skills()
	}
	for _, s := range skills {
		if s.Name != name {
			known = append(known, s.Name)
			continue
		}
		text, err := LoadSkill(s)
		if err != nil {
			return tool.ErrorResult(fmt.Sprintf("skill %q could not be read: %v", name, err)), nil
		}
		return tool.Result{
			Output:    text,
			Content:   []tool.Content{{Type: tool.ContentText, Text: "Loaded skill " + s.Name}},
			Locations: []tool.Location{{Path: s.Path}},
		}, nil
	}
	sort.Strings(known)
	msg := fmt.Sprintf("no skill named %q", name)
	if name == "" {
		msg = "name is required"
	}
	if len(known) == 0 {
		msg += "; no skills are available"
	} else {
		msg += "; available skills: " + strings.Join(known, ", ")
	}
	return tool.ErrorResult(msg), nil
}

// skillName accepts "name" and the "/name" a model may copy from a command list.
func skillName(s string) string {
	return strings.TrimPrefix(strings.TrimSpace(s), "/")
}
