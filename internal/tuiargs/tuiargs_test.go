package tuiargs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestForwardAndACPArgs(t *testing.T) {
	f := Flags{Model: "script:x.json", Agent: "rev", Yolo: true, Allow: []string{"write", "shell(go test*)"},
		Sandbox: "read-only", Resume: "s1", Theme: "light"}
	want := []string{"acp", "--log-level", "warn", "--model", "script:x.json", "--agent", "rev", "--yolo",
		"--allow", "write", "--allow", "shell(go test*)", "--sandbox", "read-only"}
	if got := f.ACPArgs(); !slices.Equal(got, want) {
		t.Errorf("ACPArgs = %q, want %q", got, want)
	}
	fwd := append(want[3:], "--resume", "s1", "--theme", "light")
	if got := f.Forward(); !slices.Equal(got, fwd) {
		t.Errorf("Forward = %q, want %q", got, fwd)
	}
	if (&Flags{Continue: true, Resume: "x"}).Validate() == nil {
		t.Error("--continue with --resume was accepted")
	}
}

func TestConnectGoesToTheRelayAndIsForwarded(t *testing.T) {
	for _, ok := range []string{"auto", "unix:/run/s.sock", "ws://127.0.0.1:7777/acp", "https://agent.example.com/acp"} {
		if err := (&Flags{Connect: ok}).Validate(); err != nil {
			t.Errorf("--connect %s: %v", ok, err)
		}
	}
	f := Flags{Model: "script:x.json", Connect: "unix:/s.sock", Session: "sess_1", TokenFile: "/t"}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []string{"acp", "--log-level", "warn", "--model", "script:x.json", "--connect", "unix:/s.sock", "--connect-token-file", "/t"}
	if got := f.ACPArgs(); !slices.Equal(got, want) {
		t.Errorf("ACPArgs = %q, want %q", got, want)
	}
	fwd := []string{"--model", "script:x.json", "--connect", "unix:/s.sock", "--session", "sess_1", "--connect-token-file", "/t"}
	if got := f.Forward(); !slices.Equal(got, fwd) {
		t.Errorf("Forward = %q, want %q", got, fwd)
	}
	for _, bad := range []Flags{{Session: "s"}, {TokenFile: "t"}, {Connect: "auto", Command: []string{"x"}}, {Connect: "auto", Resume: "s"},
		{Connect: "localhost:7777"}, {Connect: "unix:"}, {Connect: "ws://"}} {
		if bad.Validate() == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}

func TestKeyReadsConfigNamesIntoKeystrokes(t *testing.T) {
	for in, want := range map[string]string{"Ctrl+S": "ctrl+s", "alt+ctrl+x": "ctrl+alt+x", "Shift+Enter": "shift+enter",
		"escape": "esc", "F5": "f5", "ctrl++": "ctrl++", "control+pagedown": "ctrl+pgdown", "shift+tab": "shift+tab"} {
		if got, err := Key(in); err != nil || got != want {
			t.Errorf("Key(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "shift+x", "ctrl+", "hyperdrive+x", "ctrl+ctrl+x", "ctrl+nokey", "f99"} {
		if got, err := Key(bad); err == nil {
			t.Errorf("Key(%q) = %q; want an error", bad, got)
		}
	}
}

func TestKeymapRebindsAndReportsProblems(t *testing.T) {
	km, problems := Keymap(map[string][]string{
		"sessions": {"ctrl+y"},        // moved
		"newline":  {"ctrl+j", "f99"}, // one key cannot be read
		"cancel":   {"ctrl+d"},        // takes quit's default key
		"complete": {"ctrl+y"},        // the same key as sessions
		"teleport": {"ctrl+t"},        // no such action
	})
	for key, act := range map[string]string{"ctrl+y": "sessions", "ctrl+j": "newline", "ctrl+d": "cancel", "enter": "send"} {
		if km[key] != act {
			t.Errorf("%s runs %q; want %q", key, km[key], act)
		}
	}
	for _, gone := range []string{"ctrl+s", "shift+enter", "esc", "tab"} {
		if a, ok := km[gone]; ok {
			t.Errorf("%s still runs %s after its action was rebound", gone, a)
		}
	}
	all := strings.Join(problems, "\n")
	for _, want := range []string{"teleport: no such action", `"f99": no function key`, "ctrl+y is bound to both sessions and complete; sessions keeps it", "ctrl+d is bound to cancel, and is quit's default key"} {
		if !strings.Contains(all, want) {
			t.Errorf("the problems lack %q:\n%s", want, all)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems; want 4:\n%s", len(problems), all)
	}
	if _, p := Keymap(nil); len(p) != 0 {
		t.Errorf("the defaults have problems: %q", p)
	}
	u := map[string][]string{"newline": {"ctrl+j", "alt+enter"}, "sessions": nil}
	if got := ParseKeyFlags(KeyFlags(u)); len(got) != 2 || !slices.Equal(got["newline"], u["newline"]) || got["sessions"] != nil {
		t.Errorf("the flags carry %q; want %q", got, u)
	}
}

// docs/tui.md documents every rebindable action with its default keys.
func TestDocsListEveryAction(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "tui.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range Actions {
		row := "| `" + a.Name + "` | `" + strings.Join(a.Default, "`, `") + "` |"
		if !strings.Contains(string(b), row) {
			t.Errorf("docs/tui.md lacks the row of %s: %s", a.Name, row)
		}
	}
}
