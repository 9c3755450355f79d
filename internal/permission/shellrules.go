package permission

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Shell rules are matched against the parsed program (shellparse.go):
//
//   - An allow covers a command line only when the program is transparent
//     (nothing in program.opaque), every simple command in it — those that
//     wrappers and interpreters run included — matches an allow rule, and
//     every redirection that writes goes inside the roots, to /dev/null and
//     the like, or to a path a write rule allows.
//   - A deny (or ask) matches when the raw line, or any simple command's
//     text, matches the pattern, or when any command's normalised argv does
//     (see argvPattern), or when the program leaves a doubt (a computed
//     command name, a script read from a file or stdin, a parse error).

// shellCwd is where a shell call runs: the preview's first path, else the
// first root.
func shellCwd(pv tool.Preview, sc scope) string {
	if len(pv.Paths) > 0 && pv.Paths[0] != "" {
		return pv.Paths[0]
	}
	if len(sc.roots) > 0 {
		return sc.roots[0]
	}
	return ""
}

// harmlessTarget lists redirection targets that write nothing that lasts.
var harmlessTarget = map[string]bool{
	"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
	"/dev/fd/1": true, "/dev/fd/2": true,
}

// redirectTarget resolves a redirection's target; ok is false when it is
// not known before the command runs.
func redirectTarget(r redirection, p program, cwd string) (string, bool) {
	if !r.target.static {
		return "", false
	}
	t := r.target.val
	if t == "" {
		return "", false // `> ""`: no place corvid can name (bash refuses it)
	}
	if harmlessTarget[t] {
		return t, true
	}
	if !filepath.IsAbs(t) {
		if p.changesDir || cwd == "" {
			return "", false
		}
		t = filepath.Join(cwd, t)
	}
	return filepath.Clean(t), true
}

// allowShell reports whether allow rules cover the whole command line, and
// which rules did.
func allowShell(list []Rule, toolName string, pv tool.Preview, sc scope) ([]Rule, bool) {
	var used []Rule
	use := func(r Rule) {
		for _, u := range used {
			if u.raw == r.raw {
				return
			}
		}
		used = append(used, r)
	}
	for _, r := range list {
		if r.Pattern == "" && r.matchesTool(toolName) {
			return []Rule{r}, true // the whole tool
		}
	}
	p := parseProgram(pv.Command)
	if len(p.opaque) > 0 || len(p.cmds) == 0 {
		return nil, false
	}
	for _, c := range p.cmds {
		r, ok := firstRule(list, func(r Rule) bool {
			return r.Pattern != "" && r.matchesTool(toolName) && allowCommand(r.Pattern, c)
		})
		if !ok {
			return nil, false
		}
		use(r)
	}
	cwd := shellCwd(pv, sc)
	for _, rd := range p.redirs {
		if !rd.writes() {
			continue
		}
		t, ok := redirectTarget(rd, p, cwd)
		if !ok {
			return nil, false
		}
		if harmlessTarget[t] || sc.inside(t) {
			continue
		}
		// Outside the roots: only a write rule that names the place covers it.
		r, ok := firstRule(list, func(r Rule) bool {
			return r.Pattern != "" && r.matchesTool("write") && matchPaths(r.Pattern, []string{t}, sc, true)
		})
		if !ok {
			return nil, false
		}
		use(r)
	}
	return used, true
}

// allowCommand reports whether an allow pattern covers one command: its
// text matches, and the pattern's literal start ("go test" of "go test*")
// lies in words known before the command runs, so that "go test{,x}" or
// "go $SUB" is not taken for go test.
func allowCommand(pattern string, c simpleCmd) bool {
	if !matchCommandPattern(pattern, c.text()) {
		return false
	}
	lit := strings.TrimSuffix(pattern, ":*")
	if i := strings.IndexByte(lit, '*'); i >= 0 {
		lit = lit[:i]
	}
	known := 0
	for _, a := range c.assigns {
		known += len(a) + 1
	}
	for _, w := range c.argv {
		if !w.static {
			break
		}
		known += len(w.val) + 1
	}
	return len(lit) <= known
}

func firstRule(list []Rule, ok func(Rule) bool) (Rule, bool) {
	for _, r := range list {
		if ok(r) {
			return r, true
		}
	}
	return Rule{}, false
}

// denyShell reports whether a deny or ask pattern touches the command line.
func denyShell(pattern, cmd string) bool {
	if matchCommandPattern(pattern, strings.TrimSpace(cmd)) {
		return true
	}
	p := parseProgram(cmd)
	if len(p.doubt) > 0 {
		return true
	}
	ap := parseArgvPattern(pattern)
	for _, c := range p.cmds {
		if matchCommandPattern(pattern, c.text()) || ap.matches(c) {
			return true
		}
	}
	return false
}

// argvPattern is a rule pattern read as a command: "rm -rf *" is the
// program rm with the short flags r and f, in any order or grouping, and
// any arguments.
type argvPattern struct {
	name  string
	short map[byte]bool
	long  []string
	pos   []string
	more  bool // the pattern ends in * (or :*): further arguments match
}

// longAsShort maps long options to the short flag they usually mean, so
// that "rm -rf" also stops "rm --recursive --force".
var longAsShort = map[string]byte{"--recursive": 'r', "--force": 'f'}

// shortAlias folds short flags that usually mean the same thing.
var shortAlias = map[byte]byte{'R': 'r'}

func parseArgvPattern(pattern string) argvPattern {
	ap := argvPattern{short: map[byte]bool{}}
	if p, ok := strings.CutSuffix(pattern, ":*"); ok {
		pattern, ap.more = p, true
	}
	fields := strings.Fields(pattern)
	if len(fields) == 0 {
		return ap
	}
	if strings.HasSuffix(pattern, "*") {
		ap.more = true
	}
	ap.name = path.Base(fields[0])
	opts := true
	for i, f := range fields[1:] {
		last := i == len(fields)-2
		switch {
		case last && f == "*":
		case opts && f == "--":
			opts = false
		case opts && strings.HasPrefix(f, "--"):
			if b, ok := longAsShort[f]; ok {
				ap.short[b] = true
			} else {
				ap.long = append(ap.long, f)
			}
		case opts && len(f) > 1 && f[0] == '-' && !strings.Contains(f, "*"):
			for j := 1; j < len(f); j++ {
				ap.short[foldShort(f[j])] = true
			}
		default:
			ap.pos = append(ap.pos, f)
		}
	}
	return ap
}

func foldShort(b byte) byte {
	if a, ok := shortAlias[b]; ok {
		return a
	}
	return b
}

// matches reports whether a command's normalised argv fits the pattern. A
// command whose name fits but whose arguments are not all known matches:
// a computed word may expand to the denied flags.
func (ap argvPattern) matches(c simpleCmd) bool {
	if ap.name == "" || len(c.argv) == 0 || !c.argv[0].static {
		return false
	}
	if !wildcard(ap.name, path.Base(c.argv[0].val)) {
		return false
	}
	if !c.allStatic() {
		return true
	}
	short, long, pos := splitArgs(c.argv[1:])
	for b := range ap.short {
		if !short[b] {
			return false
		}
	}
	for _, lp := range ap.long {
		if !hasLong(long, lp) {
			return false
		}
	}
	if len(pos) < len(ap.pos) || len(pos) > len(ap.pos) && !ap.more {
		return false
	}
	for i, pp := range ap.pos {
		if !wildcard(pp, pos[i]) {
			return false
		}
	}
	return true
}

// splitArgs sorts a command's static arguments into short flags (aliases
// folded, long forms with a short twin included), long flags and
// positional words; "--" ends the options.
func splitArgs(args []shellWord) (short map[byte]bool, long, pos []string) {
	short = map[byte]bool{}
	opts := true
	for _, w := range args {
		v := w.val
		switch {
		case opts && v == "--":
			opts = false
		case opts && strings.HasPrefix(v, "--"):
			name, _, _ := strings.Cut(v, "=")
			if b, ok := longAsShort[name]; ok {
				short[b] = true
			}
			long = append(long, v)
		case opts && len(v) > 1 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				short[foldShort(v[j])] = true
			}
		default:
			pos = append(pos, v)
		}
	}
	return short, long, pos
}

// hasLong reports whether one of long ("--name" or "--name=value") fits
// the pattern lp, with or without its value.
func hasLong(long []string, lp string) bool {
	for _, l := range long {
		name, _, _ := strings.Cut(l, "=")
		if wildcard(lp, l) || wildcard(lp, name) {
			return true
		}
	}
	return false
}
