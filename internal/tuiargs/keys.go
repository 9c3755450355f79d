package tuiargs

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Action is one thing a key does in the TUI's input, rebindable under
// [tui.keys] in config.toml (docs/tui.md lists them).
type Action struct {
	Name    string
	Does    string
	Default []string // keys, in the form Key reads
}

// Actions are the rebindable actions, in the order the docs list them.
// Keys inside a question, a picker or the @ finder are not among them.
var Actions = []Action{
	{"send", "send the input (or run a / command)", []string{"enter"}},
	{"newline", "insert a new line", []string{"ctrl+j", "shift+enter", "alt+enter"}},
	{"cancel", "cancel the running turn (session/cancel)", []string{"esc"}},
	{"interrupt", "cancel the running turn, else clear the input; twice on an empty input quits", []string{"ctrl+c"}},
	{"quit", "quit on an empty input, else delete the character under the cursor", []string{"ctrl+d"}},
	{"cycle_mode", "next mode of the session (session/set_mode)", []string{"shift+tab"}},
	{"sessions", "list this directory's sessions and load one", []string{"ctrl+s"}},
	{"editor", "edit the input in $VISUAL or $EDITOR", []string{"ctrl+g"}},
	{"paste_image", "attach the clipboard's image (a screenshot) to the prompt", []string{"ctrl+v"}},
	{"complete", "complete a / command", []string{"tab"}},
	{"thoughts", "expand or collapse thoughts; with none streaming, print the last one in full", []string{"ctrl+t"}},
	{"output", "print the last shell call's output in full", []string{"ctrl+o"}},
	{"up", "previous prompt of this run; in a multi-line input, the line above", []string{"up", "ctrl+p"}},
	{"down", "next prompt of this run; in a multi-line input, the line below", []string{"down", "ctrl+n"}},
	{"left", "move left", []string{"left", "ctrl+b"}},
	{"right", "move right", []string{"right", "ctrl+f"}},
	{"home", "move to the line's start", []string{"home", "ctrl+a"}},
	{"end", "move to the line's end", []string{"end", "ctrl+e"}},
	{"backspace", "delete the character before the cursor", []string{"backspace", "ctrl+h"}},
	{"delete", "delete the character under the cursor", []string{"delete"}},
	{"kill_line", "delete to the line's start", []string{"ctrl+u"}},
	{"delete_word", "delete the word before the cursor", []string{"ctrl+w", "alt+backspace"}},
}

// modifiers in the order the terminal library writes them.
var modifiers = []string{"ctrl", "alt", "shift", "meta", "hyper", "super"}

// namedKey is the name of a key that is not a character, as the TUI
// matches it ("" for none). A switch, not a map: corvid links this
// package, and a map literal would be built at every start of corvid.
func namedKey(s string) string {
	switch s {
	case "enter", "return":
		return "enter"
	case "esc", "escape":
		return "esc"
	case "pgup", "pageup":
		return "pgup"
	case "pgdown", "pagedown":
		return "pgdown"
	case "delete", "del":
		return "delete"
	case "tab", "backspace", "space", "up", "down", "left", "right", "home", "end", "insert":
		return s
	}
	return ""
}

// Key reads a key as config.toml names it ("ctrl+s", "Alt+Enter",
// "shift+tab", "f5") into the form the TUI matches keystrokes in:
// modifiers lower-case in the order ctrl, alt, shift, meta, hyper, super,
// then the key. A printable character without ctrl, alt, meta, hyper or
// super is refused: bound to an action, it could no longer be typed.
func Key(s string) (string, error) {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), "+")
	if s == "+" || strings.HasSuffix(s, "++") {
		parts = append(parts[:len(parts)-2], "+") // the plus key itself
	}
	has, err := readModifiers(parts[:len(parts)-1])
	if err != nil {
		return "", err
	}
	base, err := readBase(strings.TrimSpace(parts[len(parts)-1]), has)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range modifiers {
		if has[m] {
			b.WriteString(m + "+")
		}
	}
	b.WriteString(base)
	return b.String(), nil
}

// readModifiers reads the modifiers before a key, each once.
func readModifiers(parts []string) (map[string]bool, error) {
	has := map[string]bool{}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		switch p {
		case "control":
			p = "ctrl"
		case "option":
			p = "alt"
		case "cmd", "command":
			p = "super"
		}
		known := false
		for _, m := range modifiers {
			known = known || p == m
		}
		if !known {
			return nil, fmt.Errorf("unknown modifier %q (use %s)", p, strings.Join(modifiers, ", "))
		}
		if has[p] {
			return nil, fmt.Errorf("%s twice", p)
		}
		has[p] = true
	}
	return has, nil
}

// readBase reads the key after the modifiers in has.
func readBase(base string, has map[string]bool) (string, error) {
	switch name := namedKey(base); {
	case name != "":
		return name, nil
	case len(base) > 1 && base[0] == 'f' && isNumber(base[1:]):
		if n := atoi(base[1:]); n < 1 || n > 63 {
			return "", fmt.Errorf("no function key %s", base)
		}
	case utf8.RuneCountInString(base) == 1:
		if !has["ctrl"] && !has["alt"] && !has["meta"] && !has["hyper"] && !has["super"] {
			return "", fmt.Errorf("%q alone types a character; bind it with ctrl or alt", base)
		}
	case base == "":
		return "", fmt.Errorf("no key after the modifiers")
	default:
		return "", fmt.Errorf("unknown key %q", base)
	}
	return base, nil
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// Keymap resolves the user's [tui.keys] (action → keys; a binding
// replaces the action's default keys) over the defaults. It returns which
// action each key runs and what is wrong with the table, in words: an
// unknown action, a key that cannot be read, two actions on one key. A
// wrong binding is left out (the action keeps its defaults when none of
// its keys could be read); when two actions share a key, the user's
// binding wins over a default, and between two bindings the action listed
// first in Actions wins.
func Keymap(user map[string][]string) (map[string]string, []string) {
	var problems []string
	known := map[string]bool{}
	for _, a := range Actions {
		known[a.Name] = true
	}
	var names []string
	for name := range user {
		names = append(names, name)
	}
	sort.Strings(names)
	mine := map[string][]string{} // action → the user's keys, read
	for _, name := range names {
		if !known[name] {
			problems = append(problems, fmt.Sprintf("[tui.keys] %s: no such action (the actions: %s)", name, actionNames()))
			continue
		}
		var keys []string
		for _, k := range user[name] {
			key, err := Key(k)
			if err != nil {
				problems = append(problems, fmt.Sprintf("[tui.keys] %s = %q: %v", name, k, err))
				continue
			}
			keys = append(keys, key)
		}
		if len(keys) > 0 || len(user[name]) == 0 {
			mine[name] = keys // an empty list unbinds the action
		}
	}
	km := map[string]string{}
	owner := map[string]string{} // key → "yours" or "default"
	for _, a := range Actions {
		for _, k := range mine[a.Name] {
			if prev, ok := km[k]; ok && prev != a.Name {
				problems = append(problems, fmt.Sprintf("[tui.keys] %s is bound to both %s and %s; %s keeps it", k, prev, a.Name, prev))
				continue
			}
			km[k], owner[k] = a.Name, "yours"
		}
	}
	for _, a := range Actions {
		if _, ok := mine[a.Name]; ok {
			continue
		}
		for _, k := range a.Default {
			if prev, ok := km[k]; ok {
				if owner[k] == "yours" {
					problems = append(problems, fmt.Sprintf("[tui.keys] %s is bound to %s, and is %s's default key; %s loses it (bind %s to another key)", k, prev, a.Name, a.Name, a.Name))
				}
				continue
			}
			km[k], owner[k] = a.Name, "default"
		}
	}
	return km, problems
}

func actionNames() string {
	var n []string
	for _, a := range Actions {
		n = append(n, a.Name)
	}
	return strings.Join(n, ", ")
}

// KeyFlags and ParseKeyFlags carry the user's bindings from corvid (which
// reads config.toml) to corvid-tui: one "action=key key" per flag (a key
// has no space: the space bar is "space").
func KeyFlags(user map[string][]string) []string {
	var out []string
	for name, keys := range user {
		out = append(out, name+"="+strings.Join(keys, " "))
	}
	sort.Strings(out)
	return out
}

// ParseKeyFlags is KeyFlags' inverse.
func ParseKeyFlags(flags []string) map[string][]string {
	user := map[string][]string{}
	for _, f := range flags {
		name, keys, _ := strings.Cut(f, "=")
		user[name] = append(user[name], strings.Fields(keys)...)
		if _, ok := user[name]; !ok {
			user[name] = nil
		}
	}
	return user
}
