package tool

import "golang.org/x/sys/unix"

// dirWalkFlag opens the directories of a write's path for the *at calls
// only: O_PATH needs search permission, not read permission, on each, as
// the kernel's own path walk does.
const dirWalkFlag = unix.O_PATH
