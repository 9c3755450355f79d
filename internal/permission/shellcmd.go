package permission

import (
	"strings"
)

// splitCommand splits a shell command line into its simple commands at
// ;, &, &&, ||, |, parentheses and newlines outside quotes. plain is false
// when the line substitutes commands ($(...), `...`, <(...), >(...)),
// since then the parts do not say everything that runs.
func splitCommand(cmd string) (parts []string, plain bool) {
	plain = true
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			parts = append(parts, s)
		}
		cur.Reset()
	}
	var quote byte // 0, '\'' or '"'
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
			cur.WriteByte(c)
		case c == '\\' && i+1 < len(cmd):
			if cmd[i+1] == '\n' { // line continuation
				i++
				cur.WriteByte(' ')
				continue
			}
			cur.WriteByte(c)
			cur.WriteByte(cmd[i+1])
			i++
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '`' || (c == '$' && i+1 < len(cmd) && cmd[i+1] == '(') {
				plain = false
			}
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			cur.WriteByte(c)
		case c == '`':
			plain = false
			cur.WriteByte(c)
		case c == '$' && i+1 < len(cmd) && cmd[i+1] == '(':
			plain = false
			cur.WriteByte(c)
		case (c == '<' || c == '>') && i+1 < len(cmd) && cmd[i+1] == '(':
			plain = false
			cur.WriteByte(c)
		case c == ';' || c == '|' || c == '(' || c == ')' || c == '\n':
			flush()
		case c == '&':
			// "&&", a trailing "&", but not the redirections "2>&1" / "&>".
			if i > 0 && (cmd[i-1] == '>' || cmd[i-1] == '<') || i+1 < len(cmd) && cmd[i+1] == '>' {
				cur.WriteByte(c)
				continue
			}
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return parts, plain
}

// multiCommand lists programs whose first argument names a subcommand, so
// that "always allow go test ./..." means every "go test".
var multiCommand = map[string]bool{
	"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "deno": true,
	"cargo": true, "rustup": true, "docker": true, "podman": true, "kubectl": true, "helm": true,
	"gh": true, "make": true, "just": true, "pip": true, "pip3": true, "uv": true, "poetry": true,
	"dotnet": true, "mvn": true, "gradle": true, "bazel": true, "terraform": true, "nix": true,
	"brew": true, "mix": true, "bundle": true, "rake": true, "swift": true, "zig": true,
	"flutter": true, "dart": true, "composer": true,
}

// readOnlyCommand lists programs that only look, whose prefix is the
// program itself.
var readOnlyCommand = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "pwd": true, "echo": true,
	"which": true, "file": true, "stat": true, "du": true, "df": true, "tree": true, "grep": true,
	"rg": true, "diff": true, "date": true, "whoami": true, "uname": true,
}

// CommandPrefix is what an "always" answer to a shell command covers: the
// program and its subcommand for tools like git and go ("git status",
// "go test"), the program alone for read-only ones ("ls"), and otherwise
// the exact command, so that allowing "rm build.log" does not allow every
// rm. A command starting with VAR=value assignments is taken exactly, since
// an assignment (PATH, LD_PRELOAD) can change what runs.
func CommandPrefix(cmd string) string {
	words := strings.Fields(cmd)
	if len(words) == 0 {
		return ""
	}
	prog := words[0]
	switch {
	case isAssignment(prog):
	case readOnlyCommand[prog]:
		return prog
	case multiCommand[prog] && len(words) > 1 && isSubcommand(words[1]):
		return prog + " " + words[1]
	}
	return strings.Join(words, " ")
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for _, c := range w[:i] {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isSubcommand(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for _, c := range w {
		if !(c == '-' || c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
