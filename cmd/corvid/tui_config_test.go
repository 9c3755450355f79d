package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// [tui] theme reaches corvid-tui as --theme unless the flag names one;
// auto, unset or a bad value leave it to the terminal.
func TestTUIThemeFromConfigAfterTheFlag(t *testing.T) {
	for _, c := range []struct{ config, flag, want string }{
		{"[tui]\ntheme = \"light\"\n", "", "light"},
		{"[tui]\ntheme = \"Dark\"\n", "", "dark"},
		{"[tui]\ntheme = \"light\"\n", "dark", "dark"},
		{"[tui]\ntheme = \"light\"\n", "auto", "auto"},
		{"[tui]\ntheme = \"auto\"\n", "", ""},
		{"[tui]\ntheme = \"blue\"\n", "", ""},
		{"", "", ""},
	} {
		home := t.TempDir()
		t.Setenv("CORVID_HOME", home)
		must(t, os.MkdirAll(filepath.Join(home, "config"), 0o700))
		must(t, os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(c.config+"[tui.keys]\nsessions = \"ctrl+y\"\n"), 0o600))
		var cmd tuiCmd
		cmd.Theme = c.flag
		cmd.Keys = []string{"send=ctrl+x"}
		cmd.useConfig(configTUI())
		if cmd.Theme != c.want {
			t.Errorf("config %q, --theme %q: theme %q, want %q", c.config, c.flag, cmd.Theme, c.want)
		}
		if !reflect.DeepEqual(cmd.Keys, []string{"sessions=ctrl+y", "send=ctrl+x"}) {
			t.Errorf("keys %q", cmd.Keys)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
