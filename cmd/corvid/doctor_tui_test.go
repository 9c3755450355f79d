package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
)

// The terminal's answers to the keyboard queries, as terminals send them.
func TestProbeKeyboardReadsTheTerminalsAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		answer string
		want   keyboardAnswer
	}{
		"kitty":          {"\x1b[?0u\x1b[?62;22c", keyboardAnswer{answered: true, kitty: true}},
		"xterm":          {"\x1b[>4;0m\x1b[?65;1;9c", keyboardAnswer{answered: true, modifyKey: true}},
		"tmux":           {"\x1b[?1;2c", keyboardAnswer{answered: true}},
		"split answers":  {"\x1b[?", keyboardAnswer{}},
		"nothing at all": {"", keyboardAnswer{}},
	} {
		inR, inW := io.Pipe()
		var out bytes.Buffer
		go func() { _, _ = inW.Write([]byte(tc.answer)) }()
		got := probeKeyboard(inR, &out, 200*time.Millisecond)
		inW.Close()
		if got != tc.want {
			t.Errorf("%s: %+v; want %+v", name, got, tc.want)
		}
		if out.String() != keyboardQueries {
			t.Errorf("%s: sent %q", name, out.String())
		}
	}
}

func TestDoctorChecksTUIKeysAndShiftEnter(t *testing.T) {
	for _, tc := range []struct {
		config string
		kb     keyboardAnswer
		want   []string
	}{
		{"", keyboardAnswer{answered: true, kitty: true}, []string{"[ok  ] tui keys     default keys", "[ok  ] shift+enter  the terminal speaks the kitty keyboard protocol"}},
		{"[tui.keys]\nsessions = \"ctrl+y\"\n", keyboardAnswer{answered: true, modifyKey: true}, []string{"[ok  ] tui keys     [tui.keys] rebinds 1 action", "[ok  ] shift+enter  the terminal answers modifyOtherKeys"}},
		{"[tui.keys]\nteleport = \"ctrl+t\"\nsend = \"ctrl+nope\"\ncancel = \"ctrl+d\"\nnewline = 3\n", keyboardAnswer{answered: true},
			[]string{"[warn] tui keys     [tui.keys] teleport: no such action", `[warn] tui keys     [tui.keys] send = "ctrl+nope": unknown key "nope"`,
				"[warn] tui keys     [tui.keys] ctrl+d is bound to cancel, and is quit's default key", "[warn] tui keys     [tui.keys] newline: a key", "[warn] shift+enter  the terminal reports neither"}},
		{"", keyboardAnswer{}, []string{"[warn] shift+enter  the terminal did not answer"}},
		// Ctrl+V (paste_image) is an action like the others.
		{"[tui.keys]\npaste_image = \"alt+v\"\n", keyboardAnswer{answered: true, kitty: true}, []string{"[ok  ] tui keys     [tui.keys] rebinds 1 action"}},
		{"[tui.keys]\nsessions = \"ctrl+v\"\n", keyboardAnswer{answered: true, kitty: true}, []string{"[warn] tui keys     [tui.keys] ctrl+v is bound to sessions, and is paste_image's default key"}},
		{"[tui]\ntheme = \"blue\"\n", keyboardAnswer{answered: true, kitty: true}, []string{`[warn] tui theme    [tui] theme = "blue": auto, light or dark`, "[ok  ] tui keys     default keys"}},
	} {
		home := t.TempDir()
		env := config.MapEnv{"HOME": home, "CORVID_KEYRING": "off", "XDG_RUNTIME_DIR": filepath.Join(home, "run"), "PATH": os.Getenv("PATH")}
		if err := os.MkdirAll(config.ConfigDir(env), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(config.ConfigDir(env), "config.toml"), []byte(tc.config), 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		kb := tc.kb
		d := doctor{env: env, cwd: t.TempDir(), self: []string{"/nonexistent-corvid", "acp"}, timeout: time.Second, out: &out,
			keyboard: func() keyboardAnswer { return kb }}
		d.run(context.Background())
		for _, want := range tc.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("config %q: the checklist lacks %q:\n%s", tc.config, want, out.String())
			}
		}
	}
}
