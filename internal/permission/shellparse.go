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

// hasGlobMeta reports an unescaped glob or brace character in a word's
// unquoted source text: what the shell may expand into other words. As in
// bash, a [ without a closing ] (the test command "[") is literal, and a
// brace expands only around a comma or a "..".
func hasGlobMeta(src string) bool {
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.Contains(src[i+1:], "]") {
				return true
			}
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
