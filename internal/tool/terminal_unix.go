//go:build unix

package tool

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// inOwnGroup makes cmd the leader of a new process group, so killing the
// group ends whatever the command started too.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to the process group pgid leads.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// killedBy names the signal that ended the process ("SIGKILL"), or "" when
// it exited on its own.
func killedBy(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return unix.SignalName(ws.Signal())
	}
	return ""
}
