package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSessionStoreChoosesFlagThenEnvThenConfigThenFile(t *testing.T) {
	home := t.TempDir()
	def := filepath.Join(home, "sessions.db")
	pg := "postgres://u@/db?host=/run/postgresql"
	cases := []struct {
		name, flag, env, file, want string
	}{
		{"nothing: today's file", "", "", "", def},
		{"config", "", "", pg, pg},
		{"env over config", "", "sqlite:/srv/a.db", pg, "/srv/a.db"},
		{"flag over env", "postgresql://x@h/d", "sqlite:/srv/a.db", pg, "postgresql://x@h/d"},
		{"relative sqlite path", "sqlite:rel.db", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := MapEnv{"CORVID_HOME": home, "CORVID_STORE": c.env}
			got, err := SessionStore(e, c.flag, File{Store: c.file})
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == "" {
				want, _ = filepath.Abs("rel.db")
			}
			if got != want {
				t.Errorf("SessionStore = %q, want %q", got, want)
			}
		})
	}
	for _, bad := range []string{"mysql://u:hunter2@h/d", "sqlite:", "/just/a/path"} {
		_, err := SessionStore(MapEnv{"CORVID_HOME": home}, bad, File{})
		if err == nil {
			t.Errorf("SessionStore(%q) accepted it", bad)
		} else if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "--store") {
			t.Errorf("SessionStore(%q) = %v; want an error naming --store, without the password", bad, err)
		}
	}
}

func TestProjectConfigCannotChooseTheStore(t *testing.T) {
	var f File
	if err := f.merge(&File{Store: "postgres://evil@h/d"}, false, "/p/.corvid/config.toml"); err != nil {
		t.Fatal(err)
	}
	if f.Store != "" || len(f.Ignored) != 1 || !strings.Contains(f.Ignored[0], "user config only") {
		t.Errorf("project store: Store %q, Ignored %q", f.Store, f.Ignored)
	}
}
