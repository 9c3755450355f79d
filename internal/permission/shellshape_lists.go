package permission

import (
	"strings"
	"sync"
)

// multiCommand lists programs whose first argument names a subcommand, so
// that "always allow go test ./..." means every "go test" (inside the
// workspace; see shellShape).
var multiCommand = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "deno": true,
		"cargo": true, "rustup": true, "docker": true, "podman": true, "kubectl": true, "helm": true,
		"gh": true, "make": true, "just": true, "pip": true, "pip3": true, "uv": true, "poetry": true,
		"dotnet": true, "mvn": true, "gradle": true, "bazel": true, "terraform": true, "nix": true,
		"brew": true, "mix": true, "bundle": true, "rake": true, "swift": true, "zig": true,
		"flutter": true, "dart": true, "composer": true,
	}
})

// readOnlyCommand lists programs that only look, whose prefix is the
// program itself.
var readOnlyCommand = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "pwd": true, "echo": true,
		"which": true, "file": true, "stat": true, "du": true, "df": true, "tree": true, "grep": true,
		"rg": true, "diff": true, "date": true, "whoami": true, "uname": true,
	}
})

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
