package config

import (
	"fmt"
	"strings"
)

// TUI is the [tui] table of the user config: settings of the terminal UI
// (`corvid tui`, docs/tui.md).
//
//	[tui.keys]
//	sessions = "ctrl+y"
//	newline  = ["ctrl+j", "alt+enter"]
type TUI struct {
	// Keys rebinds the TUI's actions: action → a key or a list of keys.
	// The values are checked by internal/tuiargs (corvid doctor reports
	// what is wrong), not here, so a bad binding never stops corvid.
	Keys map[string]any `toml:"keys"`
	// Theme is "auto" (ask the terminal, as when unset), "light" or
	// "dark"; corvid tui's --theme wins over it. A bad value is reported
	// by corvid doctor (ThemeProblem) and read as "auto".
	Theme string `toml:"theme"`
}

// TUITheme is the [tui] theme of the user config as corvid tui's --theme
// takes it: "light", "dark", or "" (ask the terminal) for "auto", unset,
// or a value it cannot read.
func (f *File) TUITheme() string {
	switch t := strings.ToLower(strings.TrimSpace(f.TUI.Theme)); t {
	case "light", "dark":
		return t
	}
	return ""
}

// TUIThemeProblem says what is wrong with [tui] theme, "" for nothing.
func (f *File) TUIThemeProblem() string {
	switch strings.ToLower(strings.TrimSpace(f.TUI.Theme)) {
	case "", "auto", "light", "dark":
		return ""
	}
	return fmt.Sprintf("[tui] theme = %q: auto, light or dark (read as auto)", f.TUI.Theme)
}

// TUIKeys is the [tui.keys] table as action → keys, and what in it is not
// a key or a list of keys.
func (f *File) TUIKeys() (map[string][]string, []string) {
	if len(f.TUI.Keys) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	var problems []string
	for action, v := range f.TUI.Keys {
		switch v := v.(type) {
		case string:
			out[action] = []string{v}
		case []any:
			keys := []string{}
			ok := true
			for _, k := range v {
				s, isString := k.(string)
				ok = ok && isString
				keys = append(keys, s)
			}
			if ok {
				out[action] = keys
				continue
			}
			problems = append(problems, fmt.Sprintf("[tui.keys] %s: a list of keys must hold strings", action))
		default:
			problems = append(problems, fmt.Sprintf("[tui.keys] %s: a key (\"ctrl+s\") or a list of keys, not %T", action, v))
		}
	}
	return out, problems
}
