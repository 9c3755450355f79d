//go:build !unix

package mcp

import (
	"os"
	"os/exec"
	"syscall"
)

// inOwnGroup does nothing where there are no Unix process groups.
func inOwnGroup(*exec.Cmd) {}

// signalGroup kills p on SIGKILL; other signals cannot be sent here, so
// the stop sequence goes on to SIGKILL after its grace.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = p.Kill()
	}
}
