package commands

import (
	"reflect"
	"testing"
)

func TestBuiltinsAreDescribedAndCompactTakesAFocus(t *testing.T) {
	want := []string{"compact", "clear", "init", "review", "help", "status", "cost"}
	got := Builtins()
	if len(got) != len(want) {
		t.Fatalf("Builtins() = %d commands, want %d", len(got), len(want))
	}
	for i, c := range got {
		if c.Name != want[i] || c.Description == "" || c.Source != SourceBuiltin {
			t.Errorf("Builtins()[%d] = %+v", i, c)
		}
		if c.Name == Compact && c.ArgumentHint != "focus" {
			t.Errorf("compact hint = %q, want focus", c.ArgumentHint)
		}
	}
}

func TestParseRecognisesOnlyALeadingSlashName(t *testing.T) {
	for _, tc := range []struct {
		in, name, args string
		ok             bool
	}{
		{"/compact", "compact", "", true},
		{"/compact  keep the API notes ", "compact", "keep the API notes", true},
		{"  \n/git:commit fix bug", "git:commit", "fix bug", true},
		{"/review\nline one\nline two", "review", "line one\nline two", true},
		{"/usr/bin/env is missing", "", "", false},
		{"/", "", "", false},
		{"/ compact", "", "", false},
		{"//x", "", "", false},
		{"please /compact", "", "", false},
		{"/:x", "", "", false},
		{"", "", "", false},
	} {
		name, args, ok := Parse(tc.in)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", tc.in, name, args, ok, tc.name, tc.args, tc.ok)
		}
	}
}

func TestSplitArgsRespectsQuotes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a b  c", []string{"a", "b", "c"}},
		{`"two words" 'single $q' x`, []string{"two words", "single $q", "x"}},
		{`say "he said \"hi\"" a\ b`, []string{"say", `he said "hi"`, "a b"}},
		{`"C:\dir" ''`, []string{`C:\dir`, ""}},
		{`"unclosed rest`, []string{"unclosed rest"}},
		{`end\`, []string{`end\`}},
	} {
		if got := SplitArgs(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestExpandFillsArgumentsAndPositionals(t *testing.T) {
	c := Command{Body: "Fix issue $1 in $2 (priority $3).\nAll: $ARGUMENTS. Cost $$5, $HOME stays."}
	got := Expand(c, ` 42 "the parser" `)
	// A missing positional is empty; a $ not followed by ARGUMENTS or 1-9 is literal.
	want := "Fix issue 42 in the parser (priority ).\nAll: 42 \"the parser\". Cost $, $HOME stays."
	if got != want {
		t.Errorf("Expand =\n%q\nwant\n%q", got, want)
	}
}

func TestExpandAppendsArgumentsWhenBodyHasNoPlaceholder(t *testing.T) {
	c := Command{Body: "Review the code.\n"}
	if got, want := Expand(c, "focus on errors"), "Review the code.\n\nfocus on errors"; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	if got := Expand(c, "  "); got != c.Body {
		t.Errorf("Expand with no args = %q, want the body unchanged", got)
	}
}
