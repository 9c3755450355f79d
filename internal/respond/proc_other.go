//go:build !unix

package respond

import "io/fs"

// processAlive cannot tell on this platform; a refusing socket is then kept.
func processAlive(pid int) bool { return true }

// fileOwner cannot tell on this platform.
func fileOwner(fi fs.FileInfo) (int, bool) { return 0, false }
