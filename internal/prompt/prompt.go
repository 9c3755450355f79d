// Package prompt assembles the system prompt of a session: the base prompt
// (DefaultBase, or the user's --system text), the AGENTS.md instructions
// that apply to the working directory, a short environment block (OS, date,
// cwd, git state) and the list of skills the model may load.
//
// Start with Build. It only reads files and runs "git status"; the caller
// decides when to rebuild (a new session, a changed skill set).
package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/commands"
	"github.com/corvid-agent/corvid/internal/config"
)

// InstructionsFile is the name of a project instructions file.
const InstructionsFile = "AGENTS.md"

// MemoryFiles are the instruction files read in each directory, in this
// order: AGENTS.md, then the peers' own names for it (CodeBuddy, Claude
// Code, Gemini CLI). All that exist are read; one that is the same file as
// (a symlink to) or has the same text as an earlier one is read once.
var MemoryFiles = []string{InstructionsFile, "CODEBUDDY.md", "CLAUDE.md", "GEMINI.md"}

// maxInstructions caps one AGENTS.md, so a generated or mistaken huge file
// cannot fill the context window.
const maxInstructions = 64 << 10

// Options are the inputs of Build.
type Options struct {
	// Base is the base prompt: DefaultBase, or the text of --system.
	// "" means DefaultBase.
	Base string
	// Cwd is the session's working directory.
	Cwd string
	// Env locates the user's config dir (the global AGENTS.md).
	Env config.Env
	// NoProjectInstructions leaves out every AGENTS.md, the user's global
	// one included (--no-project-instructions).
	NoProjectInstructions bool
	// Now gives the date; nil means time.Now.
	Now func() time.Time
	// Skills are listed by name and description.
	Skills []commands.Skill
}

// Build returns the system prompt: the base, then the project
// instructions (ConfigDir(env)/AGENTS.md first, then each AGENTS.md from
// the repository root down to cwd, each headed by its path, so the most
// specific comes last), then an <env> block, then the skills and how to
// load one.
func Build(o Options) string {
	var b strings.Builder
	base := strings.TrimSpace(o.Base)
	if base == "" {
		base = DefaultBase
	}
	b.WriteString(base)
	b.WriteString("\n")

	if !o.NoProjectInstructions {
		writeInstructions(&b, InstructionFiles(o.Cwd, o.Env))
	}

	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	t := now()
	fmt.Fprintf(&b, "\n<env>\nOS: %s/%s\nDate: %s\nWorking directory: %s\nGit: %s\n</env>\n",
		runtime.GOOS, runtime.GOARCH, t.Format("2006-01-02 (Monday)"), o.Cwd, GitSummary(o.Cwd))

	writeSkills(&b, o.Skills)
	return b.String()
}

// InstructionFiles lists the AGENTS.md files that apply in cwd, in prompt
// order: the user's global one (ConfigDir(env)/AGENTS.md), then those from
// the repository root down to cwd. Outside a repository only cwd's own
// file counts (see commands.ProjectDirs). Missing files are left out.
func InstructionFiles(cwd string, env config.Env) []string {
	var paths []string
	seen := map[string]bool{}
	add := func(dir string) {
		for _, name := range MemoryFiles {
			p := filepath.Join(dir, name)
			real, err := filepath.EvalSymlinks(p)
			if err != nil || seen[real] {
				continue
			}
			if info, err := os.Stat(real); err == nil && info.Mode().IsRegular() {
				seen[real] = true
				paths = append(paths, p)
			}
		}
	}
	if env != nil {
		add(config.ConfigDir(env))
	}
	dirs := commands.ProjectDirs(cwd)
	slices.Reverse(dirs)
	for _, d := range dirs {
		add(d)
	}
	return paths
}

func writeInstructions(b *strings.Builder, paths []string) {
	type file struct{ path, text string }
	var files []file
	texts := map[string]bool{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		text := strings.TrimSpace(string(data))
		if len(text) > maxInstructions {
			text = strings.ToValidUTF8(text[:maxInstructions], "") +
				fmt.Sprintf("\n[… cut: the file is larger than %d KiB; read it for the rest]", maxInstructions>>10)
		}
		if text != "" && !texts[filepath.Dir(p)+"\x00"+text] {
			texts[filepath.Dir(p)+"\x00"+text] = true // a copy beside it is read once
			files = append(files, file{p, text})
		}
	}
	if len(files) == 0 {
		return
	}
	b.WriteString("\n# Project instructions\n\n")
	b.WriteString("The user and the project keep these instructions in AGENTS.md files (and CODEBUDDY.md, CLAUDE.md or GEMINI.md). Follow them. They run from the most general to the most specific; where two disagree, the later one wins.\n")
	for _, f := range files {
		fmt.Fprintf(b, "\n## %s\n\n%s\n", f.path, f.text)
	}
}

func writeSkills(b *strings.Builder, skills []commands.Skill) {
	if len(skills) == 0 {
		return
	}
	b.WriteString("\n# Skills\n\n")
	b.WriteString("Skills are folders of instructions for particular tasks. Only their names and descriptions are listed here. When a task matches a skill's description, load the skill with the skill tool (input {\"name\": \"NAME\"}) before you start, then follow it.\n\n")
	for _, s := range skills {
		desc := strings.Join(strings.Fields(s.Description), " ")
		if desc == "" {
			fmt.Fprintf(b, "- %s\n", s.Name)
		} else {
			fmt.Fprintf(b, "- %s: %s\n", s.Name, desc)
		}
	}
}
