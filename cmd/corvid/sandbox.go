package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/corvid-agent/corvid/internal/tool"
)

// sandboxExecCmd confines itself with Landlock, then executes a command:
// what the shell tool runs when a sandbox is on (internal/tool.Sandbox).
// The restriction is inherited across exec and by every child, cannot be
// lifted, and leaves the corvid process that started it unrestricted.
type sandboxExecCmd struct {
	Mode  string   `name:"mode" required:"" enum:"workspace-write,read-only" help:"workspace-write: writes only under --write dirs; read-only: no writes."`
	Net   bool     `name:"net" help:"Allow TCP connect and bind (off by default)."`
	Write []string `name:"write" placeholder:"DIR" help:"A directory the command may write under (repeatable; workspace-write only)."`
	// UnixFilter "seccomp" forces the seccomp fallback that keeps the
	// command off corvid's control socket (CORVID_SANDBOX_UNIX_FILTER).
	UnixFilter string   `name:"unix-filter" hidden:"" enum:",seccomp" default:"" help:"seccomp: refuse AF_UNIX sockets even where Landlock can scope abstract ones."`
	Command    []string `arg:"" passthrough:"" help:"The command and its arguments, after --."`
}

// Exit status when the sandbox cannot be set up: the command did not run.
const sandboxFailed = 126

func (c *sandboxExecCmd) Run() error {
	if len(c.Command) > 0 && c.Command[0] == "--" {
		c.Command = c.Command[1:]
	}
	if len(c.Command) == 0 {
		return fmt.Errorf("sandbox-exec: no command")
	}
	path, err := exec.LookPath(c.Command[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "corvid sandbox-exec: %v\n", err)
		os.Exit(127)
	}
	// The Landlock domain belongs to the thread that asks for it, and exec
	// from that same thread hands it to the new program (and its children):
	// so the goroutine keeps its thread from here to the exec.
	runtime.LockOSThread()
	if err := restrictSelf(c.Mode, c.Write, c.Net, c.UnixFilter); err != nil {
		fmt.Fprintf(os.Stderr, "corvid: the command was not run: the shell sandbox (%s) cannot be set up: %v.\n"+
			"It needs Landlock: Linux 6.2 or later (ABI 3) with the network allowed, 6.7 or later (ABI 4) with it off, and landlock in the kernel's lsm= list.\n"+
			"Run corvid with --sandbox off (or sandbox = \"off\" in config) to run shell commands unconfined.\n", c.Mode, err)
		os.Exit(sandboxFailed)
	}
	err = syscall.Exec(path, c.Command, os.Environ())
	fmt.Fprintf(os.Stderr, "corvid sandbox-exec: exec %s: %v\n", path, err)
	os.Exit(127)
	return nil
}

// sandboxUnavailable says why this kernel cannot enforce sb ("" if it can).
func sandboxUnavailable(sb tool.Sandbox) string {
	if !sb.On() {
		return ""
	}
	need := 4
	if sb.Network {
		need = 3
	}
	abi := landlockABI()
	if abi < need {
		return fmt.Sprintf("the shell sandbox (%s) needs Landlock ABI %d; this kernel offers %d, so shell commands will fail until corvid runs with --sandbox off", sb.Mode, need, abi)
	}
	if abi < 6 && !unixFilterBuilt() {
		return fmt.Sprintf("the shell sandbox (%s) needs Landlock ABI 6 on %s (this kernel offers %d) to keep commands off corvid's control socket, so shell commands will fail until corvid runs with --sandbox off", sb.Mode, runtime.GOARCH, abi)
	}
	return ""
}
