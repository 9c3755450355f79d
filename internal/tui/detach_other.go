//go:build !unix

package tui

import "os/exec"

// detach does nothing where there are no sessions.
func detach(*exec.Cmd) {}

// killAgent kills the agent process.
func killAgent(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
