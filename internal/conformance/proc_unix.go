//go:build unix

package conformance

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so killGroup reaches
// everything the agent spawned.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the agent's whole process group. It is harmless when the
// group is already gone.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
