package commands

import (
	"reflect"
	"strings"
	"testing"
)

func TestFrontMatterReadsSimpleKeysListsAndBlocks(t *testing.T) {
	text := "---\r\n" +
		"description: \"Commit: the staged changes\"  \r\n" +
		"argument-hint: [message] # shown in the menu\r\n" +
		"allowed-tools: [read, 'shell', grep]\r\n" +
		"Model: gpt-5\r\n" +
		"long: >\r\n  folded\r\n  text\r\n" +
		"steps: |\r\n  one\r\n  two\r\n" +
		"tags:\r\n  - x\r\n  - \"y\"\r\n" +
		"metadata:\r\n  owner: me\r\n" +
		"# a comment\r\n" +
		"---\r\n" +
		"Body $ARGUMENTS\r\n"
	fm, body, warnings := splitFrontMatter(text)
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	if body != "Body $ARGUMENTS\n" {
		t.Errorf("body = %q", body)
	}
	for k, want := range map[string]string{
		"description":   "Commit: the staged changes",
		"argument-hint": "[message]",
		"model":         "gpt-5",
		"long":          "folded text",
		"steps":         "one\ntwo",
		"tags":          "x, y",
		"metadata":      "",
	} {
		if fm[k] != want {
			t.Errorf("fm[%q] = %q, want %q", k, fm[k], want)
		}
	}
	if got := fm.list("allowed-tools"); !reflect.DeepEqual(got, []string{"read", "shell", "grep"}) {
		t.Errorf("allowed-tools = %q", got)
	}
	if got := fm.list("tags"); !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("tags = %q", got)
	}
}

func TestFrontMatterListForms(t *testing.T) {
	for in, want := range map[string][]string{
		"read, edit":                     {"read", "edit"},
		"[read,edit]":                    {"read", "edit"},
		"read edit":                      {"read", "edit"},
		"shell(git status)":              {"shell(git status)"},
		"shell(git add:*), shell(git s)": {"shell(git add:*)", "shell(git s)"},
		"[]":                             nil,
	} {
		fm := frontMatter{"k": in}
		if got := fm.list("k"); !reflect.DeepEqual(got, want) {
			t.Errorf("list(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFrontMatterProblemsAreWarnings(t *testing.T) {
	fm, body, warnings := splitFrontMatter("---\ndescription: ok\nthis line is wrong\n---\nbody\n")
	if fm["description"] != "ok" || body != "body\n" {
		t.Errorf("fm = %v, body = %q", fm, body)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "line 3") {
		t.Errorf("warnings = %q, want one about line 3", warnings)
	}

	text := "---\ndescription: never closed\nbody\n"
	fm, body, warnings = splitFrontMatter(text)
	if len(fm) != 0 || body != text || len(warnings) != 1 {
		t.Errorf("unclosed: fm = %v, body = %q, warnings = %q", fm, body, warnings)
	}

	fm, body, warnings = splitFrontMatter("no header\n---\nnot a header either\n")
	if len(fm) != 0 || !strings.HasPrefix(body, "no header") || warnings != nil {
		t.Errorf("no header: fm = %v, body = %q, warnings = %q", fm, body, warnings)
	}

	fm, body, _ = splitFrontMatter("---\n---\nempty header")
	if len(fm) != 0 || body != "empty header" {
		t.Errorf("empty header: fm = %v, body = %q", fm, body)
	}
}

// Headers are YAML where YAML can read them, and "key: text" where a hand-written line is
// not valid YAML.
func TestFrontMatterIsYAMLWithAPlainFallback(t *testing.T) {
	text := "---\n" +
		"description: Use when: the user asks\n" +
		"name: \"caf\\u00e9\"\n" +
		"hint: 'it''s'\n" +
		"allowed-tools: [read,\n  grep]\n" +
		"disable: yes\n" +
		"---\nbody"
	fm, body, warnings := splitFrontMatter(text)
	if len(warnings) != 0 || body != "body" {
		t.Errorf("warnings = %q, body = %q", warnings, body)
	}
	for k, want := range map[string]string{
		"description": "Use when: the user asks",
		"name":        "café",
		"hint":        "it's",
	} {
		if fm[k] != want {
			t.Errorf("fm[%q] = %q, want %q", k, fm[k], want)
		}
	}
	if got := fm.list("allowed-tools"); !reflect.DeepEqual(got, []string{"read", "grep"}) {
		t.Errorf("allowed-tools = %q", got)
	}
	if !fm.bool("disable") {
		t.Error("disable: yes is not true")
	}
}
