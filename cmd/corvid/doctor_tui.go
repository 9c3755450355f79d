package main

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/tuiargs"
)

// tuiKeys checks the [tui] table of the user config: a theme that is not
// auto, light or dark; in [tui.keys], unknown actions, keys that cannot be
// read, two actions on one key (docs/tui.md).
func (d *doctor) tuiKeys(file *config.File) {
	if p := file.TUIThemeProblem(); p != "" {
		d.item("warn", "tui theme", "%s", p)
	}
	user, problems := file.TUIKeys()
	_, more := tuiargs.Keymap(user)
	problems = append(problems, more...)
	switch {
	case len(problems) > 0:
		for _, p := range problems {
			d.item("warn", "tui keys", "%s", p)
		}
	case len(user) > 0:
		d.item("ok", "tui keys", "[tui.keys] rebinds %d action(s); the others keep their default keys", len(user))
	default:
		d.item("ok", "tui keys", "default keys (rebind them under [tui.keys], docs/tui.md)")
	}
}

// keyboardAnswer is what a terminal said to the keyboard queries.
type keyboardAnswer struct {
	answered  bool // it answered the primary device attributes query at all
	kitty     bool // the kitty keyboard protocol (CSI ? flags u)
	modifyKey bool // xterm's modifyOtherKeys (CSI > 4 ; N m)
}

// hasReply reports whether b holds ESC [ prefix, then digits and
// semicolons (as many as body allows), then final: a terminal's answer.
// (Hand-written: a regexp compiled at package init would cost every start
// of corvid, `corvid acp` included.)
func hasReply(b []byte, prefix string, body string, final byte) bool {
	for i := 0; i+2+len(prefix) < len(b); i++ {
		if b[i] != 0x1b || b[i+1] != '[' || string(b[i+2:min(i+2+len(prefix), len(b))]) != prefix {
			continue
		}
		j := i + 2 + len(prefix)
		for j < len(b) && strings.IndexByte(body, b[j]) >= 0 {
			j++
		}
		if j < len(b) && b[j] == final {
			return true
		}
	}
	return false
}

// keyboardQueries asks for the kitty keyboard flags, the modifyOtherKeys
// level, and the primary device attributes, which every terminal
// answers: its answer comes last and ends the wait.
const keyboardQueries = "\x1b[?u\x1b[?4m\x1b[c"

// probeKeyboard sends keyboardQueries to out and reads the answers from in
// until the device attributes come or timeout passes.
func probeKeyboard(in io.Reader, out io.Writer, timeout time.Duration) keyboardAnswer {
	if _, err := io.WriteString(out, keyboardQueries); err != nil {
		return keyboardAnswer{}
	}
	got := make(chan []byte, 16)
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				got <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				close(got)
				return
			}
		}
	}()
	var seen []byte
	deadline := time.After(timeout)
	for !hasReply(seen, "?", "0123456789;", 'c') {
		select {
		case b, ok := <-got:
			if !ok {
				return parseKeyboard(seen)
			}
			seen = append(seen, b...)
		case <-deadline:
			return parseKeyboard(seen)
		}
	}
	return parseKeyboard(seen)
}

func parseKeyboard(b []byte) keyboardAnswer {
	return keyboardAnswer{answered: hasReply(b, "?", "0123456789;", 'c'), kitty: hasReply(b, "?", "0123456789", 'u'),
		modifyKey: hasReply(b, ">4", "0123456789;", 'm')}
}

// shiftEnter reports whether the terminal corvid doctor runs in lets the
// TUI tell Shift+Enter from Enter. It asks the controlling terminal
// (/dev/tty, so a redirected stdout does not matter); without one it says
// why it cannot know, and hints from $TERM_PROGRAM.
func (d *doctor) shiftEnter() {
	probe := d.keyboard
	if probe == nil {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil || !term.IsTerminal(int(tty.Fd())) {
			d.item("ok", "shift+enter", "not checked: no terminal to ask (no controlling terminal), and only the terminal can say whether it reports Shift+Enter. %s", terminalHint(d.env))
			return
		}
		// Not closed: the reader of the answers may still be waiting on it
		// when a terminal never answers.
		probe = func() keyboardAnswer {
			old, err := term.MakeRaw(int(tty.Fd()))
			if err != nil {
				return keyboardAnswer{}
			}
			defer term.Restore(int(tty.Fd()), old)
			return probeKeyboard(tty, tty, time.Second)
		}
	}
	a := probe()
	tmux := d.env.Getenv("TMUX") != ""
	switch {
	case a.kitty:
		d.item("ok", "shift+enter", "the terminal speaks the kitty keyboard protocol: Shift+Enter inserts a new line in corvid tui")
	case a.modifyKey:
		d.item("ok", "shift+enter", "the terminal answers modifyOtherKeys: Shift+Enter inserts a new line in corvid tui")
	case !a.answered:
		d.item("warn", "shift+enter", "the terminal did not answer the keyboard queries within 1 s; Ctrl+J always inserts a new line. %s", terminalHint(d.env))
	case tmux && tmuxOption("extended-keys") != "off":
		d.item("warn", "shift+enter", "in tmux, which answers neither keyboard query: with its extended-keys on, Shift+Enter inserts a new line when the terminal outside tmux reports it (run corvid doctor outside tmux to check that one); Ctrl+J always does")
	case tmux:
		d.item("warn", "shift+enter", "in tmux with extended-keys off: Shift+Enter sends like Enter. Ctrl+J inserts a new line; or `set -g extended-keys on` in tmux.conf, in a terminal that reports Shift+Enter")
	default:
		d.item("warn", "shift+enter", "the terminal reports neither the kitty keyboard protocol nor modifyOtherKeys: Shift+Enter sends like Enter; Ctrl+J (or Alt+Enter) inserts a new line")
	}
}

// terminalHint guesses from $TERM_PROGRAM and $TERM: only a hint, since
// support also depends on the version and on tmux or screen in between.
func terminalHint(env config.Env) string {
	prog := strings.ToLower(env.Getenv("TERM_PROGRAM") + " " + env.Getenv("TERM"))
	for _, t := range []string{"kitty", "wezterm", "ghostty", "foot", "iterm", "alacritty", "rio"} {
		if strings.Contains(prog, t) {
			return "Hint: " + t + " reports Shift+Enter (kitty keyboard protocol) in its recent versions; run corvid doctor in it to check."
		}
	}
	return "Ctrl+J inserts a new line in every terminal; Shift+Enter needs the kitty keyboard protocol or modifyOtherKeys (kitty, WezTerm, Ghostty, foot, iTerm2, xterm)."
}

func tmuxOption(name string) string {
	out, err := exec.Command("tmux", "show-options", "-gv", name).Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
