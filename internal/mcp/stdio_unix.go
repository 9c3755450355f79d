//go:build unix

package mcp

import (
	"os"
	"os/exec"
	"syscall"
)

// inOwnGroup makes cmd the leader of a new process group, so stopping the
// server stops what it started too.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group p leads.
func signalGroup(p *os.Process, sig syscall.Signal) {
	_ = syscall.Kill(-p.Pid, sig)
}
