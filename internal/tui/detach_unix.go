//go:build unix

package tui

import (
	"os/exec"
	"syscall"
)

// detach starts the agent in a session of its own, without the terminal:
// nothing it runs can read from or draw on the terminal the UI owns, and
// the terminal's signals reach the UI only.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// killAgent kills the agent and everything it started: its session's
// process group (an npm launcher's child would otherwise keep the pipes
// open after the launcher died).
func killAgent(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
