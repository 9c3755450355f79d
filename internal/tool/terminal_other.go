//go:build !unix

package tool

import (
	"os"
	"os/exec"
)

// inOwnGroup does nothing where there are no Unix process groups: only the
// command itself is killed, not what it started.
func inOwnGroup(*exec.Cmd) {}

// killGroup kills the process pgid (no process groups here).
func killGroup(pgid int) {
	if p, err := os.FindProcess(pgid); err == nil {
		_ = p.Kill()
	}
}

// killedBy is "" here: exits are not reported as signals.
func killedBy(*os.ProcessState) string { return "" }
