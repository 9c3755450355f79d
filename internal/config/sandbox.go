package config

import "strings"

// SandboxUnixFilter is how sandboxed shell commands are kept off corvid's
// control socket: "" lets `corvid sandbox-exec` choose (Landlock's
// abstract-socket scope where the kernel has Landlock ABI 6, else a
// seccomp filter that refuses AF_UNIX sockets), "seccomp" forces the
// filter even where the scope exists, to test or compare that path. Read
// from CORVID_SANDBOX_UNIX_FILTER; any other value is "".
func SandboxUnixFilter(env Env) string {
	if strings.EqualFold(strings.TrimSpace(env.Getenv("CORVID_SANDBOX_UNIX_FILTER")), "seccomp") {
		return "seccomp"
	}
	return ""
}
