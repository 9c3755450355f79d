package permission

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// The fuzz target and the generated-program test check one property: under
// the rule shell(go test*), nothing that Decide allows runs anything but go
// test. The oracle is written apart from the matcher: it walks the bash
// syntax tree itself and accepts a program only if every command in it is
// plain `go test…`, nothing substitutes or defines code, and every
// redirection that writes stays in the workspace.

var shellSeeds = []string{
	"go test ./...",
	`go test $'\'' ; touch pwned ; echo $'\''`,
	"go test ./... #'\ntouch pwned\necho '",
	"go test ./... > ../outside/f",
	"go test ./... >> ~/.bashrc",
	"go test $(touch pwned)",
	"go test `touch pwned`",
	"go test <(touch pwned)",
	"bash -c 'touch pwned'",
	"eval 'touch pwned'",
	"go test() { touch pwned; }; go test",
	"go test <<EOF\n$(touch pwned)\nEOF",
	"go test \\\n; touch pwned",
	"go test ./... && go test -run X",
	"go test 'a;b' \"c|d\" > out.txt 2>&1",
	"\"go\" test; g\\o test",
	"go test ${x@P} ${!y} $((a[1]))",
	"go test &>/tmp/x",
	"go test >&/tmp/x",
	"{ go test; touch pwned; }",
	"if go test; then touch pwned; fi",
	"go test | sh",
	"go test\r\ntouch pwned",
	"PATH=/tmp go test",
	"go test {a,b}; {touch,pwned}",
}

func FuzzShellAllow(f *testing.F) {
	for _, s := range shellSeeds {
		f.Add(s)
	}
	root := fuzzRoot(f)
	rs, err := ParseRules([]string{"shell(go test*)"}, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		checkGoTestOnly(t, root, rs, cmd)
	})
}

func TestShellAllowOnGeneratedPrograms(t *testing.T) {
	root := fuzzRoot(t)
	rs, err := ParseRules([]string{"shell(go test*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(12, 1))
	allowed := 0
	n := 4000
	if testing.Short() {
		n = 500
	}
	bash := newStubBash(t, root)
	for range n {
		cmd := genProgram(rng, 0)
		if checkGoTestOnly(t, root, rs, cmd) {
			allowed++
			if allowed <= maxBashRuns {
				bash.check(t, cmd)
			}
		}
	}
	// The generator must reach both verdicts, or the test proves nothing.
	if allowed == 0 || allowed == n {
		t.Fatalf("%d of %d generated programs allowed; the generator is not exercising the matcher", allowed, n)
	}
	t.Logf("%d of %d generated programs allowed", allowed, n)
}

func fuzzRoot(tb testing.TB) string {
	base, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	root := filepath.Join(base, "ws")
	if err := os.MkdirAll(root, 0o755); err != nil {
		tb.Fatal(err)
	}
	return root
}

// checkGoTestOnly fails t when Decide allows cmd and the oracle does not
// accept it; it returns whether cmd was allowed.
func checkGoTestOnly(t *testing.T, root string, rs *Rules, cmd string) bool {
	t.Helper()
	pv := shell(cmd)
	pv.Paths = []string{root}
	d := Decide(Input{Tool: "shell", Preview: pv, Roots: []string{root}, Rules: rs})
	if d.Action != Allow {
		return false
	}
	if why := oracleGoTestOnly(cmd, root); why != "" {
		t.Errorf("allowed (%s) but %s:\n%s", d.Reason, why, cmd)
	}
	return true
}

// oracleGoTestOnly returns why cmd may run more than go test, or "".
func oracleGoTestOnly(cmd, root string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "bash cannot parse it"
	}
	why := ""
	calls := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.FuncDecl, *syntax.ArithmExp, *syntax.ArithmCmd,
			*syntax.LetClause, *syntax.DeclClause, *syntax.CoprocClause, *syntax.TestClause:
			why = "it holds a substitution, definition or evaluation"
		case *syntax.ParamExp:
			if n.Excl || n.Index != nil || n.Slice != nil || n.Exp != nil && n.Exp.Op == syntax.OtherParamOps {
				why = "it expands a parameter with an operator"
			}
		case *syntax.CallExpr:
			calls++
			switch {
			case len(n.Assigns) > 0:
				why = "a command sets variables"
			case len(n.Args) < 2:
				why = "a command is not go test"
			case oracleLit(n.Args[0]) != "go" || !strings.HasPrefix(oracleLit(n.Args[1]), "test"):
				why = "a command is not go test"
			}
		case *syntax.Redirect:
			switch n.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				why = "it has a here-document"
			case syntax.RdrIn, syntax.DplIn, syntax.WordHdoc:
			case syntax.DplOut:
				if t := oracleLit(n.Word); t != "-" && strings.Trim(t, "0123456789") != "" {
					why = oracleTarget(t, root)
				}
			default:
				why = oracleTarget(oracleLit(n.Word), root)
			}
		}
		return true
	})
	if why == "" && calls == 0 {
		why = "it runs no go test"
	}
	return why
}

// oracleLit is a word's value when it is plain literal text, single quotes
// or double quotes around literal text; "\x00" otherwise.
func oracleLit(w *syntax.Word) string {
	var b strings.Builder
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") {
				return "\x00"
			}
			// bash: \x is x, \newline is nothing, a final \ stays; an
			// unescaped glob or brace expansion makes the word computed.
			v := p.Value
			var bare strings.Builder // v with escaped characters blanked
			for i := 0; i < len(v); i++ {
				if v[i] == '\\' && i+1 < len(v) {
					i++
					bare.WriteByte('_')
					if v[i] != '\n' {
						b.WriteByte(v[i])
					}
					continue
				}
				bare.WriteByte(v[i])
				b.WriteByte(v[i])
			}
			if bs := bare.String(); strings.ContainsAny(bs, "*?") || strings.Contains(bs, "[") && strings.Contains(bs[strings.Index(bs, "["):], "]") || braceExpands(bs) {
				return "\x00"
			}
		case *syntax.SglQuoted:
			if !p.Dollar || !strings.Contains(p.Value, "\\") {
				// '...', and $'...' without an escape, is its text
				// (go test$''0 runs go test0).
				b.WriteString(p.Value)
				continue
			}
			v, ok := bashANSIC(p.Value)
			if !ok {
				return "\x00"
			}
			b.WriteString(v)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(l.Value, "\\") {
					return "\x00"
				}
				b.WriteString(l.Value)
			}
		default:
			return "\x00"
		}
	}
	return b.String()
}

// bashANSIC is what real bash makes of $'text' (escapes decoded), or
// false when bash is not installed or fails.
func bashANSIC(text string) (string, bool) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return "", false
	}
	out, err := exec.Command(bash, "--norc", "--noprofile", "-c", "printf %s $'"+text+"'").Output()
	if err != nil {
		return "", false
	}
	return string(out), true
}

// braceExpands: bash expands {a,b} and {1..3}, not {} or {a}.
func braceExpands(s string) bool {
	for {
		i := strings.Index(s, "{")
		if i < 0 {
			return false
		}
		s = s[i+1:]
		j := strings.Index(s, "}")
		if j < 0 {
			return false
		}
		if in := s[:j]; strings.Contains(in, ",") || strings.Contains(in, "..") {
			return true
		}
	}
}

func oracleTarget(t, root string) string {
	if t == "/dev/null" || t == "/dev/stdout" || t == "/dev/stderr" {
		return ""
	}
	if strings.Contains(t, "\x00") || t == "" {
		return "a redirection writes to a computed place"
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(root, t)
	}
	if t = filepath.Clean(t); t != root && !strings.HasPrefix(t, root+"/") {
		return "a redirection writes outside the workspace: " + t
	}
	return ""
}

var (
	genCmds = []string{"go test ./...", "go test", "go test -run X", "touch pwned", "echo hi", "rm -rf x",
		"go vet", `"go" test`, `g\o test`, "go 'test'", "go test $X", "$GO test", "go test *.go", "go  test",
		"gotest", "go test{,}", "cat ../secret"}
	genSeps   = []string{" ; ", " && ", " || ", " | ", "\n", " & ", " \\\n ", "\r\n", ";"}
	genRedirs = []string{"> ../out", "> out", ">> ~/.bashrc", "2>&1", "> /dev/null", ">&2", ">& ../x",
		"&> /tmp/x", "> $F", "< in", "<<< word", "> a/../../b", "> \"../q\"", "<> ../rw"}
	genNoise = []string{"$'\\''", "'#'", "#'", "\"", "'", "\\", "#", "$'\\n'", "'$(x)'", "\"$(touch pwned)\"", "`id`"}
)

// genProgram builds a random shell program from pieces that attacks and
// everyday commands are made of.
func genProgram(rng *rand.Rand, depth int) string {
	pick := func(l []string) string { return l[rng.IntN(len(l))] }
	var b strings.Builder
	for i := range 1 + rng.IntN(3) {
		if i > 0 {
			b.WriteString(pick(genSeps))
		}
		var c string
		switch r := rng.IntN(12); {
		case r < 6 || depth > 1:
			c = pick(genCmds)
		case r == 6:
			c = "go test $(" + genProgram(rng, depth+1) + ")"
		case r == 7:
			c = "bash -c '" + genProgram(rng, depth+1) + "'"
		case r == 8:
			c = "( " + genProgram(rng, depth+1) + " )"
		case r == 9:
			c = "{ " + genProgram(rng, depth+1) + "; }"
		case r == 10:
			c = "if " + pick(genCmds) + "; then " + genProgram(rng, depth+1) + "; fi"
		default:
			c = "f() { " + pick(genCmds) + "; }; f"
		}
		b.WriteString(c)
		if rng.IntN(3) == 0 {
			b.WriteString(" " + pick(genRedirs))
		}
		if rng.IntN(4) == 0 {
			b.WriteString(" " + pick(genNoise) + " " + pick(genCmds))
		}
	}
	return b.String()
}

// maxBashRuns bounds how many allowed programs run in real bash (each
// costs a few processes).
const maxBashRuns = 100

// stubBash runs allowed programs in real bash, a second oracle that shares
// nothing with the parser: every program on PATH is a stub that logs its
// argv, the workspace sits alone in a directory, and HOME is an empty one
// beside it. After a run, only go test may have been logged, and nothing
// may have appeared outside the workspace.
type stubBash struct {
	bash, path, log, base, home, root string
}

func newStubBash(t *testing.T, root string) *stubBash {
	t.Helper()
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Log("no bash on PATH; generated programs are checked by the syntax-tree oracle only")
		return nil
	}
	stubs := t.TempDir()
	b := &stubBash{bash: bashPath, path: stubs, log: filepath.Join(stubs, "log"), base: filepath.Dir(root), root: root,
		home: filepath.Join(filepath.Dir(root), "home")}
	if err := os.MkdirAll(b.home, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go", "touch", "rm", "cat", "gotest", "sh", "bash", "id", "x", "f", "g"} {
		// One NUL-terminated append per run, so that the commands of a
		// pipeline do not interleave and arguments may hold newlines.
		stub := "#!/bin/sh\nline=\"${0##*/}\"\nfor a; do line=\"$line $a\"; done\nprintf '%s\\0' \"$line\" >> " + b.log + "\n"
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func (b *stubBash) check(t *testing.T, cmd string) {
	t.Helper()
	if b == nil {
		return
	}
	_ = os.Remove(b.log)
	c := exec.Command(b.bash, "--norc", "--noprofile", "-c", cmd)
	c.Dir = b.root
	c.Env = []string{"PATH=" + b.path, "HOME=" + b.home}
	c.Stdin = strings.NewReader("")
	c.WaitDelay = 5 * time.Second
	_ = c.Run() // go test stubs succeed; syntax errors and missing files are fine
	logged, _ := os.ReadFile(b.log)
	for _, line := range strings.Split(string(logged), "\x00") {
		if line != "" && !strings.HasPrefix(line, "go test") {
			t.Errorf("allowed, and bash ran %q:\n%s", line, cmd)
		}
	}
	entries, _ := os.ReadDir(b.base)
	for _, e := range entries {
		if e.Name() != filepath.Base(b.root) && e.Name() != "home" {
			t.Errorf("allowed, and bash created %s outside the workspace:\n%s", e.Name(), cmd)
			_ = os.RemoveAll(filepath.Join(b.base, e.Name()))
		}
	}
	if home, _ := os.ReadDir(b.home); len(home) > 0 {
		t.Errorf("allowed, and bash wrote into HOME:\n%s", cmd)
		for _, e := range home {
			_ = os.RemoveAll(filepath.Join(b.home, e.Name()))
		}
	}
}
