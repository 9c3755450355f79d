package tool

import (
	"os"
	"strings"
)

// Sandbox modes for shell commands.
const (
	SandboxOff            = "off"
	SandboxWorkspaceWrite = "workspace-write"
	SandboxReadOnly       = "read-only"
)

// SandboxModes lists the valid sandbox modes.
var SandboxModes = []string{SandboxOff, SandboxWorkspaceWrite, SandboxReadOnly}

// Sandbox confines the shell tool's commands with the kernel (Landlock on
// Linux). The command does not run directly: Exe (the corvid binary) runs
// `sandbox-exec`, which restricts itself and then executes bash, so the
// restriction holds for the command and everything it starts, and corvid
// itself stays unrestricted. Reads are not limited; writes are limited to
// the session roots and the temp dir (none in read-only mode); TCP is off
// unless Network; corvid's control socket is out of reach (abstract unix
// sockets made outside the sandbox, or where the kernel cannot scope
// those, every AF_UNIX socket).
type Sandbox struct {
	Mode    string // "" or SandboxOff: commands run unconfined
	Network bool   // allow TCP connect and bind
	Exe     string // the binary that implements sandbox-exec
	// UnixFilter "seccomp" makes sandbox-exec keep commands off corvid's
	// control socket with its seccomp filter even where Landlock's
	// abstract-socket scope exists ("": sandbox-exec chooses).
	UnixFilter string
}

// On reports whether commands are confined.
func (s *Sandbox) On() bool {
	return s != nil && s.Mode != "" && s.Mode != SandboxOff
}

// Label says what the sandbox allows, for the permission question.
func (s *Sandbox) Label() string {
	if !s.On() {
		return "no sandbox"
	}
	net := "no network"
	if s.Network {
		net = "network allowed"
	}
	return "sandbox: " + s.Mode + ", " + net
}

// ShellCommand is the program and arguments that run cmdline as the shell
// tool does: bash -c, inside the session's sandbox when it is on.
func (env *Env) ShellCommand(cmdline string) (string, []string) { return env.shellArgv(cmdline) }

// shellArgv is the program and arguments that run cmdline with bash -c,
// inside the sandbox when it is on.
func (env *Env) shellArgv(cmdline string) (string, []string) {
	sb := env.Sandbox
	if !sb.On() {
		return "bash", []string{"-c", cmdline}
	}
	args := []string{"sandbox-exec", "--mode", sb.Mode}
	if sb.Network {
		args = append(args, "--net")
	}
	if sb.UnixFilter != "" {
		args = append(args, "--unix-filter", sb.UnixFilter)
	}
	if sb.Mode == SandboxWorkspaceWrite {
		for _, r := range env.Roots {
			args = append(args, "--write", r)
		}
		args = append(args, "--write", strings.TrimRight(os.TempDir(), "/"))
	}
	args = append(args, "--", "bash", "-c", cmdline)
	return sb.Exe, args
}
