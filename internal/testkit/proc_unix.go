//go:build unix

package testkit

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts cmd in its own process group so Kill reaches its children.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

func (e *Editor) killProcess() { killGroup(e.cmd) }
