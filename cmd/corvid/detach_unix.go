//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// detach makes cmd a session leader of its own, so the daemon that
// `corvid acp --connect auto` starts outlives the relay and its editor,
// and a signal to the editor's process group does not reach it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
