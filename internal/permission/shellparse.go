package permission

import (
	"bytes"
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// program is what a shell command line runs, as far as a static reading of
// its syntax tree (mvdan.cc/sh, bash dialect) can tell. Rules are matched
// against it, never against the raw text: quoting, comments, line
// continuations and newlines are the parser's business.
type program struct {
	// cmds are the simple commands, in source order, including those inside
	// substitutions, function bodies and the commands that wrappers (sudo,
	// env, xargs, find -exec) and interpreters (sh -c, eval) run.
	cmds []simpleCmd
	// redirs are the redirections of every statement.
	redirs []redirection
	// opaque lists why an allow cannot cover the program: something in it
	// runs code that is not a plain command of the tree (a substitution,
	// eval, sh -c, a here-document, a function) or cannot be read.
	opaque []string
	// doubt lists why a deny cannot rule the program out: a command whose
	// name or body is only known at run time. In doubt, a deny matches.
	doubt []string
	// changesDir is set when a command (cd, pushd, popd) moves the shell,
	// so that relative redirection targets are no longer known.
	changesDir bool
}

// simpleCmd is one command with its words.
type simpleCmd struct {
	argv []shellWord
	// assigns holds VAR=value prefixes; they can change what runs (PATH,
	// LD_PRELOAD), so a command with them matches only a rule naming them.
	assigns []string
	// nested is set for a command that another one runs (sudo rm, sh -c).
	nested bool
}

// shellWord is one word: val is exactly what the shell passes when static;
// otherwise (expansions, globs, ~) val is the word's source text.
type shellWord struct {
	val    string
	static bool
}

type redirection struct {
	op     syntax.RedirOperator
	target shellWord
}

// writes reports whether the redirection opens its target for writing.
func (r redirection) writes() bool {
	switch r.op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		return true
	case syntax.DplOut:
		// >&2 and >&- duplicate a descriptor; >&file writes a file.
		return !isFD(r.target.val) || !r.target.static
	}
	return false
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// text renders the command for pattern matching: assignments, then the
// words separated by single spaces. A known word that holds spaces or
// other special characters is shown quoted, so that the word "go test"
// (one program name) does not read as the two words go test.
func (c simpleCmd) text() string {
	parts := append([]string(nil), c.assigns...)
	for _, w := range c.argv {
		v := w.val
		if w.static && needsQuote(v) {
			if q, err := syntax.Quote(v, syntax.LangBash); err == nil {
				v = q
			}
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, " ")
}

func needsQuote(s string) bool {
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("\"'`$;&|<>()\\", r) {
			return true
		}
	}
	return false
}

// allStatic reports whether every word is known before the command runs.
func (c simpleCmd) allStatic() bool {
	for _, w := range c.argv {
		if !w.static {
			return false
		}
	}
	return true
}

// maxShellDepth bounds how deep sh -c / eval bodies are parsed; deeper
// nesting is treated as unknown.
const maxShellDepth = 6

// parseProgram reads a command line as bash would.
func parseProgram(src string) program {
	var p program
	p.add(src, 0, false)
	return p
}

// add parses src into p; nested marks commands another command runs.
func (p *program) add(src string, depth int, nested bool) {
	if depth > maxShellDepth {
		p.opaque = append(p.opaque, "nested too deeply")
		p.doubt = append(p.doubt, "nested too deeply")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		p.opaque = append(p.opaque, "does not parse")
		p.doubt = append(p.doubt, "does not parse")
		return
	}
	p.walk(f, depth, nested)
}

func (p *program) walk(node syntax.Node, depth int, nested bool) {
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			p.call(n, depth, nested)
		case *syntax.CmdSubst:
			p.opaque = append(p.opaque, "command substitution")
		case *syntax.ProcSubst:
			p.opaque = append(p.opaque, "process substitution")
		case *syntax.FuncDecl:
			p.opaque = append(p.opaque, "function definition")
		case *syntax.CoprocClause:
			p.opaque = append(p.opaque, "coprocess")
		case *syntax.DeclClause:
			// declare, export, local, readonly, typeset, nameref: they set
			// variables (some evaluate arithmetic in subscripts).
			p.opaque = append(p.opaque, n.Variant.Value+" declaration")
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop, *syntax.TestClause, *syntax.TestDecl:
			// Arithmetic evaluates a[$(cmd)] subscripts found in variables.
			p.opaque = append(p.opaque, "arithmetic or test evaluation")
		case *syntax.ParamExp:
			if !plainParam(n) {
				p.opaque = append(p.opaque, "parameter expansion with an operator")
			}
		case *syntax.Redirect:
			p.redirect(n)
		}
		return true
	})
}

// plainParam reports whether a parameter expansion only reads a variable
// ($x, ${x}, ${#x}, ${x:-word}, ${x#pattern}, ...). Indirection (${!x}),
// subscripts, slices and ${x@P} can evaluate code held in a variable.
func plainParam(pe *syntax.ParamExp) bool {
	if pe.Param == nil || pe.Excl || pe.Index != nil || pe.Slice != nil || pe.Names != 0 ||
		pe.NestedParam != nil || pe.Flags != nil || len(pe.Modifiers) > 0 {
		return false
	}
	return pe.Exp == nil || pe.Exp.Op != syntax.OtherParamOps
}

func (p *program) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		p.opaque = append(p.opaque, "here-document")
		return
	case syntax.WordHdoc:
		return // a here-string is data
	}
	if r.Word == nil {
		return
	}
	p.redirs = append(p.redirs, redirection{op: r.Op, target: wordOf(r.Word)})
}

// call records a simple command and what it runs in turn.
func (p *program) call(ce *syntax.CallExpr, depth int, nested bool) {
	c := simpleCmd{nested: nested}
	for _, a := range ce.Assigns {
		c.assigns = append(c.assigns, printNode(a))
	}
	for _, w := range ce.Args {
		c.argv = append(c.argv, wordOf(w))
	}
	p.cmds = append(p.cmds, c)
	if len(c.argv) > 0 {
		p.inner(c.argv, depth, 0)
	}
}

// inner looks at what a command runs besides itself: the command a wrapper
// runs, the program an interpreter reads.
func (p *program) inner(argv []shellWord, depth, hops int) {
	if hops > maxShellDepth {
		p.doubt = append(p.doubt, "wrapped too deeply")
		return
	}
	name := argv[0]
	if !name.static {
		p.opaque = append(p.opaque, "the command name is computed")
		p.doubt = append(p.doubt, "the command name is computed")
		return
	}
	base := path.Base(name.val)
	args := argv[1:]
	switch base {
	case "cd", "pushd", "popd":
		p.changesDir = true
	case "eval", "trap", "watch":
		p.opaque = append(p.opaque, base+" runs a string")
		body, ok := evalBody(base, args)
		if !ok {
			p.doubt = append(p.doubt, base+" of a computed string")
			return
		}
		if body != "" {
			p.add(body, depth+1, true)
		}
	case "source", ".":
		p.opaque = append(p.opaque, base+" runs a file")
		p.doubt = append(p.doubt, base+" runs a file")
	case "alias":
		p.opaque = append(p.opaque, "alias")
		for _, a := range args {
			if _, v, ok := strings.Cut(a.val, "="); ok {
				if !a.static {
					p.doubt = append(p.doubt, "alias of a computed string")
					continue
				}
				p.add(v, depth+1, true)
			}
		}
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash":
		p.opaque = append(p.opaque, base+" runs a program of its own")
		body, ok := interpreterBody(args)
		switch {
		case !ok:
			p.doubt = append(p.doubt, base+" reads a script or standard input")
		case !body.static:
			p.doubt = append(p.doubt, base+" -c of a computed string")
		default:
			p.add(body.val, depth+1, true)
		}
	default:
		if in, ok := unwrap(base, args); ok {
			if len(in) == 0 {
				return
			}
			p.cmds = append(p.cmds, simpleCmd{argv: in, nested: true})
			p.inner(in, depth, hops+1)
		}
	}
}

// evalBody is the string eval, trap or watch runs.
func evalBody(name string, args []shellWord) (string, bool) {
	var parts []string
	switch name {
	case "trap":
		rest := skipOptions(args, nil)
		if len(rest) == 0 || rest[0].val == "-" {
			return "", true
		}
		rest = rest[:1]
		args = rest
	case "watch":
		args = skipOptions(args, map[string]bool{"-n": true, "--interval": true, "-q": true, "--equexit": true})
	}
	for _, a := range args {
		if !a.static {
			return "", false
		}
		parts = append(parts, a.val)
	}
	return strings.Join(parts, " "), true
}

// interpreterBody finds the -c string of sh, bash and the like; ok is false
// when the shell reads a script file or standard input instead.
func interpreterBody(args []shellWord) (shellWord, bool) {
	hasC := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return a, hasC
		}
		switch {
		case a.val == "--" || a.val == "-":
			if hasC && i+1 < len(args) {
				return args[i+1], true
			}
			return shellWord{}, false
		case a.val == "-o" || a.val == "+o" || a.val == "-O" || a.val == "+O" || a.val == "--rcfile" || a.val == "--init-file":
			i++
		case strings.HasPrefix(a.val, "--"):
			// --norc, --login, --posix ...
		case strings.HasPrefix(a.val, "-") || strings.HasPrefix(a.val, "+"):
			if strings.ContainsRune(a.val[1:], 'c') {
				hasC = true
			}
			if strings.HasSuffix(a.val, "o") || strings.HasSuffix(a.val, "O") {
				i++ // -euo pipefail: the option name follows
			}
		default:
			if hasC {
				return a, true
			}
			return shellWord{}, false
		}
	}
	return shellWord{}, false
}

// wrapperOptions lists, for commands that run another command, the options
// that take a value (so the value is not mistaken for the command).
var wrapperOptions = map[string]map[string]bool{
	"command": {}, "builtin": {}, "nohup": {}, "setsid": {}, "time": {}, "busybox": {},
	"exec":    {"-a": true},
	"env":     {"-u": true, "--unset": true, "-C": true, "--chdir": true, "-S": true, "--split-string": true},
	"sudo":    {"-u": true, "-g": true, "-C": true, "-D": true, "-h": true, "-p": true, "-r": true, "-t": true, "-U": true, "-T": true, "-R": true},
	"doas":    {"-u": true, "-C": true},
	"nice":    {"-n": true, "--adjustment": true},
	"ionice":  {"-c": true, "-n": true, "-p": true, "-P": true, "-u": true},
	"stdbuf":  {"-i": true, "-o": true, "-e": true},
	"timeout": {"-s": true, "--signal": true, "-k": true, "--kill-after": true},
	"xargs":   {"-I": true, "-L": true, "-n": true, "-P": true, "-s": true, "-d": true, "-E": true, "-a": true, "--arg-file": true, "--delimiter": true, "--max-args": true, "--max-procs": true, "--replace": true},
	"flock":   {"-w": true, "--timeout": true, "-E": true, "-c": true, "--command": true},
	"chroot":  {"--userspec": true, "--groups": true},
}

// unwrap returns the command a wrapper runs (sudo rm -rf x → rm -rf x);
// ok is false for commands that are not wrappers.
func unwrap(name string, args []shellWord) ([]shellWord, bool) {
	if name == "find" {
		return findExec(args), true
	}
	opts, ok := wrapperOptions[name]
	if !ok {
		return nil, false
	}
	rest := skipOptions(args, opts)
	switch name {
	case "env":
		for len(rest) > 0 && rest[0].static && isAssignment(rest[0].val) {
			rest = rest[1:]
		}
	case "timeout":
		if len(rest) > 0 {
			rest = rest[1:] // the duration
		}
	case "chroot", "flock":
		if len(rest) > 0 {
			rest = rest[1:] // the new root, the lock file
		}
	}
	return rest, true
}

// skipOptions drops leading options; opts says which take a value.
func skipOptions(args []shellWord, opts map[string]bool) []shellWord {
	for i := 0; i < len(args); i++ {
		v := args[i].val
		if v == "--" {
			return args[i+1:]
		}
		if !strings.HasPrefix(v, "-") || v == "-" || !args[i].static {
			return args[i:]
		}
		if opts[v] && !strings.Contains(v, "=") {
			i++
		}
	}
	return nil
}

// findExec returns the command of find's -exec, -execdir, -ok or -okdir
// (the first one; find -exec ... -exec ... is rare enough to ask about as
// a whole, since the second stays among the arguments of the first).
func findExec(args []shellWord) []shellWord {
	for i, a := range args {
		switch a.val {
		case "-exec", "-execdir", "-ok", "-okdir":
			in := args[i+1:]
			for j, b := range in {
				if b.val == ";" || b.val == "+" {
					return in[:j]
				}
			}
			return in
		}
	}
	return nil
}

// wordOf reads a word: its value when nothing in it expands at run time.
func wordOf(w *syntax.Word) shellWord {
	static := true
	var unquoted strings.Builder // the word with quoted text as "q"
	for i, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			unquoted.WriteString(part.Value)
			if i == 0 && strings.HasPrefix(part.Value, "~") {
				static = false
			}
		case *syntax.SglQuoted:
			unquoted.WriteString("q")
		case *syntax.DblQuoted:
			unquoted.WriteString("q")
			for _, q := range part.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					static = false
				}
			}
		default:
			static = false
		}
	}
	if !static || hasGlobMeta(unquoted.String()) {
		return shellWord{val: printNode(w)}
	}
	var b strings.Builder
	for _, part := range w.Parts {
		if lit, ok := part.(*syntax.Lit); ok {
			b.WriteString(unescape(lit.Value))
			continue
		}
		// Quotes: expand knows $'...' escapes and "..." backslashes.
		v, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{part}})
		if err != nil {
			return shellWord{val: printNode(w)}
		}
		b.WriteString(v)
	}
	return shellWord{val: b.String(), static: true}
}

// unescape removes the backslashes of an unquoted literal (\r → r).
func unescape(src string) string {
	if !strings.Contains(src, "\\") {
		return src
	}
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		if src[i] == '\\' && i+1 < len(src) {
			i++
			if src[i] == '\n' {
				continue
			}
		}
		b.WriteByte(src[i])
	}
	return b.String()
}

// hasGlobMeta reports an unescaped glob or brace character in a literal's
// source text: what the shell may expand into other words. The test
// command "[" is the one literal [; a brace expands only around a comma or
// a "..".
func hasGlobMeta(src string) bool {
	if src == "[" {
		return false
	}
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		case '{':
			if j := strings.Index(src[i+1:], "}"); j >= 0 {
				in := src[i+1 : i+1+j]
				if strings.Contains(in, ",") || strings.Contains(in, "..") {
					return true
				}
			}
		}
	}
	return false
}

func printNode(n syntax.Node) string {
	var b bytes.Buffer
	if err := syntax.NewPrinter(syntax.Minify(false)).Print(&b, n); err != nil {
		return "?"
	}
	return b.String()
}
