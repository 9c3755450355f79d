//go:build unix

package acpkit

import (
	"os/exec"
	"syscall"
)

// OwnGroup makes cmd the leader of a new process group, so KillGroup reaches its children.
func OwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// KillGroup kills the process group led by cmd's process (started by Spawn), then the
// process itself. It is harmless when they are already gone.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
