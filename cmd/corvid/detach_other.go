//go:build !unix

package main

import "os/exec"

// detach does nothing where there are no sessions to leave; the daemon
// is still started in the background.
func detach(cmd *exec.Cmd) {}
