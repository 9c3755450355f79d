package main

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// reportPipe writes the size of the pipe on stdout to the file named by
// FLOOD_PIPE_REPORT, when it is set and stdout is a pipe.
func reportPipe() {
	f := os.Getenv("FLOOD_PIPE_REPORT")
	if f == "" {
		return
	}
	n, err := unix.FcntlInt(os.Stdout.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		n = -1
	}
	_ = os.WriteFile(f+".tmp", []byte(strconv.Itoa(n)), 0o644)
	_ = os.Rename(f+".tmp", f)
}
