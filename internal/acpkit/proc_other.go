//go:build !unix

package acpkit

import "os/exec"

// OwnGroup does nothing where there are no Unix process groups.
func OwnGroup(*exec.Cmd) {}

// KillGroup kills cmd's process; its children are not reached outside Unix.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
