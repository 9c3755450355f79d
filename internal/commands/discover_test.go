package commands

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/config"
)

// fakeProject lays out a repository (a .git folder is enough for
// ProjectDirs) at top/repo with the session in top/repo/sub, a user config
// dir at top/xdg/corvid, and a .corvid folder above the repository that
// must not be read.
func fakeProject(t *testing.T) (cwd string, env config.Env, top string) {
	t.Helper()
	top = t.TempDir()
	writeFiles(t, top, map[string]string{
		"repo/.git/HEAD":                       "ref: refs/heads/main\n",
		"repo/.corvid/commands/deploy.md":      "---\ndescription: Deploy the app\nargument-hint: <env>\nmodel: anthropic:claude-haiku\nallowed-tools: shell, read\n---\nDeploy to $1.\n",
		"repo/.corvid/commands/git/commit.md":  "---\ndescription: Commit\n---\nCommit with message $ARGUMENTS\n",
		"repo/.corvid/commands/shared.md":      "---\ndescription: outer project shared\n---\nouter\n",
		"repo/.corvid/commands/nodesc.md":      "# Summarise the diff\n\nDo it.\n",
		"repo/.corvid/commands/bad.md":         "---\ndescription: still usable\nnot valid\n---\nbad body\n",
		"repo/.corvid/commands/.hidden.md":     "hidden\n",
		"repo/.corvid/commands/notes.txt":      "not markdown\n",
		"repo/.corvid/commands/help.md":        "shadowing a built-in\n",
		"repo/sub/.corvid/commands/shared.md":  "---\ndescription: inner project shared\n---\ninner\n",
		"repo/.corvid/skills/pdf/SKILL.md":     "---\nname: pdf\ndescription: Work with PDF files\nallowed-tools: [read, shell]\n---\nUse pdftotext.\n",
		"repo/.corvid/skills/pdf/scripts/x.sh": "echo\n",
		"repo/.agents/skills/lint/SKILL.md":    "---\ndescription: Lint the code\n---\nRun the linter.\n",
		"repo/.agents/skills/deploy/SKILL.md":  "---\ndescription: clashes with the deploy command\n---\n",
		"repo/.corvid/skills/off/SKILL.md":     "---\ndescription: disabled\ndisable: true\n---\n",
		"repo/.corvid/skills/nofile/README.md": "not a skill\n",
		"xdg/corvid/commands/shared.md":        "---\ndescription: user shared\n---\nuser\n",
		"xdg/corvid/commands/mine.md":          "---\ndescription: A user command\n---\nmine\n",
		"xdg/corvid/skills/pdf/SKILL.md":       "---\nname: pdf\ndescription: user pdf\n---\nuser pdf\n",
		"xdg/corvid/skills/notes/SKILL.md":     "---\nname: notes\ndescription: Take notes\n---\nWrite notes.\n",
		".corvid/commands/outside.md":          "above the repository\n",
	})
	return filepath.Join(top, "repo", "sub"), config.MapEnv{"XDG_CONFIG_HOME": filepath.Join(top, "xdg"), "HOME": filepath.Join(top, "home")}, top
}

func TestDiscoverReadsProjectUserAndSkillsWithPrecedence(t *testing.T) {
	cwd, env, top := fakeProject(t)
	cmds, skills, warnings := Discover(cwd, env)

	byName := map[string]Command{}
	var names []string
	for _, c := range cmds {
		byName[c.Name] = c
		names = append(names, c.Name)
	}
	wantNames := []string{"bad", "deploy", "git:commit", "lint", "mine", "nodesc", "notes", "pdf", "shared"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("command names = %q, want %q", names, wantNames)
	}

	d := byName["deploy"]
	if d.Source != SourceProject || d.Description != "Deploy the app" || d.ArgumentHint != "<env>" ||
		d.Model != "anthropic:claude-haiku" || !reflect.DeepEqual(d.AllowedTools, []string{"shell", "read"}) ||
		d.Body != "Deploy to $1.\n" || d.Path != filepath.Join(top, "repo", ".corvid", "commands", "deploy.md") {
		t.Errorf("deploy = %+v", d)
	}
	if c := byName["git:commit"]; c.Description != "Commit" || c.Source != SourceProject {
		t.Errorf("git:commit = %+v", c)
	}
	if c := byName["shared"]; c.Description != "inner project shared" {
		t.Errorf("shared = %+v; the innermost project file should win", c)
	}
	if c := byName["mine"]; c.Source != SourceUser {
		t.Errorf("mine = %+v", c)
	}
	if c := byName["nodesc"]; c.Description != "Summarise the diff" {
		t.Errorf("nodesc description = %q, want its first line", c.Description)
	}
	if c := byName["bad"]; c.Description != "still usable" || c.Body != "bad body\n" {
		t.Errorf("bad = %+v", c)
	}
	if c := byName["pdf"]; c.Source != SourceSkill || c.Description != "Work with PDF files" || c.Body != "Use pdftotext.\n" {
		t.Errorf("pdf command = %+v; the project skill should win", c)
	}
	if c := byName["lint"]; c.Source != SourceSkill || !strings.HasSuffix(c.Path, filepath.Join(".agents", "skills", "lint", "SKILL.md")) {
		t.Errorf("lint command = %+v", c)
	}

	var skillNames []string
	for _, s := range skills {
		skillNames = append(skillNames, s.Name)
	}
	if want := []string{"deploy", "lint", "notes", "pdf"}; !reflect.DeepEqual(skillNames, want) {
		t.Errorf("skills = %q, want %q", skillNames, want)
	}
	pdf := skills[3]
	if pdf.Dir != filepath.Join(top, "repo", ".corvid", "skills", "pdf") || pdf.Path != filepath.Join(pdf.Dir, "SKILL.md") ||
		!reflect.DeepEqual(pdf.AllowedTools, []string{"read", "shell"}) {
		t.Errorf("pdf skill = %+v", pdf)
	}
	if byName["deploy"].Source != SourceProject {
		t.Errorf("a skill must not replace a command of the same name")
	}

	joined := strings.Join(warnings, "\n")
	for _, want := range []string{"bad.md: front matter line 3", "help.md: /help is a built-in", `skill "deploy" is not offered`} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	if len(warnings) != 3 {
		t.Errorf("got %d warnings, want 3:\n%s", len(warnings), joined)
	}
}

func TestDiscoverOutsideARepositoryReadsOnlyCwd(t *testing.T) {
	top := t.TempDir()
	writeFiles(t, top, map[string]string{
		".corvid/commands/parent.md":    "parent\n",
		"work/.corvid/commands/here.md": "here\n",
	})
	cmds, skills, warnings := Discover(filepath.Join(top, "work"), config.MapEnv{"XDG_CONFIG_HOME": filepath.Join(top, "none")})
	if len(cmds) != 1 || cmds[0].Name != "here" || len(skills) != 0 || len(warnings) != 0 {
		t.Errorf("cmds = %+v, skills = %+v, warnings = %q", cmds, skills, warnings)
	}
}

func TestDiscoverWithNothingOnDisk(t *testing.T) {
	top := t.TempDir()
	cmds, skills, warnings := Discover(filepath.Join(top, "missing"), config.MapEnv{"XDG_CONFIG_HOME": top})
	if cmds != nil || skills != nil || warnings != nil {
		t.Errorf("got %v %v %v", cmds, skills, warnings)
	}
}

func TestProjectDirsStopAtTheRepositoryRoot(t *testing.T) {
	top := t.TempDir()
	writeFiles(t, top, map[string]string{"repo/.git": "gitdir: elsewhere\n", "repo/a/b/keep": ""})
	got := ProjectDirs(filepath.Join(top, "repo", "a", "b"))
	want := []string{filepath.Join(top, "repo", "a", "b"), filepath.Join(top, "repo", "a"), filepath.Join(top, "repo")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ProjectDirs = %q, want %q", got, want)
	}
	if err := os.Remove(filepath.Join(top, "repo", ".git")); err != nil {
		t.Fatal(err)
	}
	if got := ProjectDirs(filepath.Join(top, "repo", "a")); len(got) != 1 {
		t.Errorf("outside a repository ProjectDirs = %q, want cwd only", got)
	}
}
