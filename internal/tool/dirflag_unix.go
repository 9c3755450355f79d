//go:build unix && !linux

package tool

import "golang.org/x/sys/unix"

// dirWalkFlag opens the directories of a write's path for the *at calls.
const dirWalkFlag = unix.O_RDONLY
