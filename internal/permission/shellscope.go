package permission

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/corvid-agent/corvid/internal/tool"
)

// shellShape is what an "always" answer remembers of one command: its
// leading words, and whether further arguments may follow. Arguments that
// follow must name places inside the workspace (see argInside).
type shellShape struct {
	words []string
	exact bool // the command must be these words and nothing more
}

func (s shellShape) String() string {
	t := shorten(strings.Join(s.words, " "), 60)
	if s.exact {
		return "`" + t + "`"
	}
	return "`" + t + " …`"
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func (s shellShape) equal(o shellShape) bool {
	return s.exact == o.exact && strings.Join(s.words, "\x00") == strings.Join(o.words, "\x00")
}

// shapeOf is a command's shape: the program and its subcommand for tools
// like git and go ("git status"), the program alone for read-only ones
// ("cat"), and otherwise the exact words, so that allowing "rm build.log"
// does not allow every rm.
func shapeOf(argv []string) shellShape {
	name := argv[0]
	switch {
	case readOnlyCommand()[name]:
		return shellShape{words: []string{name}}
	case multiCommand()[name] && len(argv) > 1 && isSubcommand(argv[1]):
		return shellShape{words: []string{name, argv[1]}}
	}
	return shellShape{words: argv, exact: true}
}

func staticArgv(c simpleCmd) []string {
	out := make([]string, len(c.argv))
	for i, w := range c.argv {
		out[i] = w.val
	}
	return out
}

// shellScope returns the shapes an "always allow" answer to cmd remembers.
// ok is false when the line is not plain enough to generalise — it writes
// through a redirection, changes directory, sets variables, runs hidden or
// computed code, or wraps another command — and then only the exact line
// is remembered.
func shellScope(cmd string) (shapes []shellShape, ok bool) {
	p := parseProgram(cmd)
	if len(p.opaque) > 0 || len(p.cmds) == 0 || p.changesDir {
		return nil, false
	}
	for _, r := range p.redirs {
		if r.writes() && !(r.target.static && harmlessTarget[r.target.val]) {
			return nil, false
		}
	}
	for _, c := range p.cmds {
		if c.nested || len(c.assigns) > 0 || len(c.argv) == 0 || !c.allStatic() {
			return nil, false
		}
		if _, wraps := unwrap(c.argv[0].val, nil); wraps {
			return nil, false
		}
		s := shapeOf(staticArgv(c))
		if !containsShape(shapes, s) {
			shapes = append(shapes, s)
		}
	}
	return shapes, true
}

func containsShape(list []shellShape, s shellShape) bool {
	for _, o := range list {
		if o.equal(s) {
			return true
		}
	}
	return false
}

// looseShapes is what an "always reject" answer remembers: the shape of
// every command with a known name, as a prefix.
func looseShapes(cmd string) []shellShape {
	var out []shellShape
	for _, c := range parseProgram(cmd).cmds {
		if len(c.argv) == 0 || !c.argv[0].static {
			continue
		}
		var words []string
		for _, w := range c.argv {
			if !w.static {
				break
			}
			words = append(words, w.val)
		}
		s := shapeOf(words)
		s.exact = false
		if !containsShape(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// shapesCover reports whether remembered shapes cover the whole line: the
// same conditions as shellScope, every command fits a shape, and every
// further argument stays inside the workspace.
func shapesCover(shapes []shellShape, cmd, cwd string, sc scope) bool {
	if len(shapes) == 0 {
		return false
	}
	p := parseProgram(cmd)
	if len(p.opaque) > 0 || len(p.cmds) == 0 || p.changesDir {
		return false
	}
	for _, r := range p.redirs {
		if r.writes() && !(r.target.static && harmlessTarget[r.target.val]) {
			return false
		}
	}
	for _, c := range p.cmds {
		if c.nested || len(c.assigns) > 0 || len(c.argv) == 0 || !c.allStatic() {
			return false
		}
		argv := staticArgv(c)
		covered := false
		for _, s := range shapes {
			if s.covers(argv, cwd, sc) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

func (s shellShape) covers(argv []string, cwd string, sc scope) bool {
	if len(argv) < len(s.words) || s.exact && len(argv) != len(s.words) {
		return false
	}
	for i, w := range s.words {
		if argv[i] != w {
			return false
		}
	}
	for _, a := range argv[len(s.words):] {
		if !argInside(a, cwd, sc) {
			return false
		}
	}
	return true
}

// argInside reports whether an argument, read as a path where it could be
// one, stays inside the workspace: "x.txt" and "./..." do, "../x", "/etc"
// and "--file=/etc/x" do not, nor a flag with a path glued to it.
func argInside(a, cwd string, sc scope) bool {
	if strings.HasPrefix(a, "-") {
		_, v, hasValue := strings.Cut(a, "=")
		switch {
		case hasValue && strings.ContainsAny(v, "/~"):
			a = v
		case !hasValue && strings.Contains(a, "/"):
			return false
		default:
			return true
		}
	}
	if !filepath.IsAbs(a) {
		if cwd == "" {
			return false
		}
		a = filepath.Join(cwd, a)
	}
	return sc.inside(a)
}

// shapesTouch reports whether any command of the line has a remembered
// shape (for "always reject").
func shapesTouch(shapes []shellShape, cmd string) bool {
	for _, c := range parseProgram(cmd).cmds {
		if len(c.argv) == 0 || !c.argv[0].static {
			continue
		}
		var words []string
		for _, w := range c.argv {
			words = append(words, w.val)
		}
		for _, s := range shapes {
			if len(words) >= len(s.words) && strings.Join(words[:len(s.words)], "\x00") == strings.Join(s.words, "\x00") {
				return true
			}
		}
	}
	return false
}

// AlwaysLabel names what an "always allow" answer to the call would
// remember, for the option the user picks: the scope is exactly what
// Memory.Remember stores.
func AlwaysLabel(toolName string, pv tool.Preview) string {
	switch pv.Access {
	case tool.AccessExecute:
		if pv.Command == "" {
			return fmt.Sprintf("Always allow `%s`", toolName)
		}
		shapes, ok := shellScope(pv.Command)
		if !ok {
			return "Always allow exactly this command"
		}
		names := make([]string, len(shapes))
		open := false
		for i, s := range shapes {
			names[i] = s.String()
			open = open || !s.exact
		}
		if !open {
			return "Always allow exactly " + strings.Join(names, ", ")
		}
		return "Always allow " + strings.Join(names, ", ") + " (arguments inside the workspace, no redirection)"
	case tool.AccessNetwork:
		if h := hostOf(pv.URL); h != "" {
			return "Always allow fetching from " + h
		}
	case tool.AccessRead, tool.AccessWrite:
		if pv.Kind == tool.KindDelete {
			return "Always allow deleting this file (files only, this path)"
		}
		return fmt.Sprintf("Always allow `%s` inside the workspace and on these paths", toolName)
	}
	return fmt.Sprintf("Always allow `%s`", toolName)
}
