package commands

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/tool"
)

func testSkills(t *testing.T) []Skill {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"pdf/SKILL.md":           "---\nname: pdf\ndescription: PDFs\n---\n# PDF\n\nRun scripts/extract.sh FILE.\n",
		"pdf/scripts/extract.sh": "#!/bin/sh\n",
		"pdf/reference.md":       "ref\n",
		"pdf/.cache/junk":        "x",
	})
	return []Skill{
		{Name: "pdf", Description: "PDFs", Path: filepath.Join(dir, "pdf", "SKILL.md"), Dir: filepath.Join(dir, "pdf")},
		{Name: "gone", Description: "deleted", Path: filepath.Join(dir, "gone", "SKILL.md"), Dir: filepath.Join(dir, "gone")},
	}
}

func TestLoadSkillGivesBodyAndOtherFiles(t *testing.T) {
	s := testSkills(t)[0]
	text, err := LoadSkill(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "description: PDFs") {
		t.Errorf("front matter leaked into the text:\n%s", text)
	}
	for _, want := range []string{"# PDF\n\nRun scripts/extract.sh FILE.", "Skill folder: " + s.Dir, "- reference.md\n- scripts/extract.sh\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("LoadSkill text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "junk") || strings.Contains(text, "- SKILL.md") {
		t.Errorf("hidden files or SKILL.md itself are listed:\n%s", text)
	}
}

func TestSkillToolLoadsAndReportsUnknownSkills(t *testing.T) {
	skills := testSkills(t)
	st := SkillTool(func() []Skill { return skills })
	if st.Name() != "skill" || !strings.Contains(st.Description(), "skill") || !json.Valid(st.InputSchema()) {
		t.Fatalf("tool metadata: %q %q %s", st.Name(), st.Description(), st.InputSchema())
	}
	p := st.Describe(&tool.Env{}, json.RawMessage(`{"name":"pdf"}`))
	if p.Kind != tool.KindThink || p.Access != tool.AccessNone || p.Title != "Load skill pdf" {
		t.Errorf("Describe = %+v", p)
	}

	run := func(input string) tool.Result {
		t.Helper()
		r, err := st.Run(context.Background(), &tool.Env{}, tool.Call{ID: "1", Input: json.RawMessage(input)})
		if err != nil {
			t.Fatalf("Run(%s): %v", input, err)
		}
		return r
	}
	if r := run(`{"name":"/pdf"}`); r.IsError || !strings.Contains(r.Output, "Run scripts/extract.sh") {
		t.Errorf("loading pdf: %+v", r)
	}
	if r := run(`{"name":"nope"}`); !r.IsError || !strings.Contains(r.Output, `no skill named "nope"; available skills: gone, pdf`) {
		t.Errorf("unknown skill: %+v", r)
	}
	if r := run(`{"name":"gone"}`); !r.IsError || !strings.Contains(r.Output, "could not be read") {
		t.Errorf("missing file: %+v", r)
	}
	if r := run(`{"name":3}`); !r.IsError {
		t.Errorf("bad input: %+v", r)
	}
	empty := SkillTool(func() []Skill { return nil })
	r, _ := empty.Run(context.Background(), &tool.Env{}, tool.Call{Input: json.RawMessage(`{}`)})
	if !r.IsError || !strings.Contains(r.Output, "name is required; no skills are available") {
		t.Errorf("no skills: %+v", r)
	}
}
