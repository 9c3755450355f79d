package config

import (
	"strings"
	"testing"
)

// [tui] theme is read from the user config only; a bad value is a
// problem for doctor and reads as auto.
func TestTUITheme(t *testing.T) {
	env, _, cwd := layout(t, "[tui]\ntheme = \"light\"\n", "[tui]\ntheme = \"dark\"\n")
	f, err := Load(env, cwd)
	if err != nil {
		t.Fatal(err)
	}
	if f.TUITheme() != "light" || f.TUIThemeProblem() != "" {
		t.Errorf("theme %q, problem %q; want the user's light", f.TUITheme(), f.TUIThemeProblem())
	}
	if len(f.Ignored) != 1 || !strings.Contains(f.Ignored[0], "[tui]") {
		t.Errorf("Ignored = %q, want the project's [tui]", f.Ignored)
	}
	for theme, want := range map[string]string{"auto": "", "DARK": "dark", "": ""} {
		f := &File{TUI: TUI{Theme: theme}}
		if f.TUITheme() != want || f.TUIThemeProblem() != "" {
			t.Errorf("%q: theme %q, problem %q", theme, f.TUITheme(), f.TUIThemeProblem())
		}
	}
	bad := &File{TUI: TUI{Theme: "solarized"}}
	if bad.TUITheme() != "" || !strings.Contains(bad.TUIThemeProblem(), `"solarized"`) {
		t.Errorf("solarized: theme %q, problem %q", bad.TUITheme(), bad.TUIThemeProblem())
	}
}
