package tui

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// agentPipeBytes is the size asked for the pipe the agent writes its
// frames into: 1 MiB, Linux's default limit for an unprivileged process
// (/proc/sys/fs/pipe-max-size), against the default 64 KiB. A fast
// stream fills 64 KiB in about 2 ms, less than a time slice of the
// UI's reader when the agent, the UI and the terminal share the cores,
// and a full pipe stops the agent until the UI reads.
const agentPipeBytes = 1 << 20

// growPipe asks for a larger buffer in the pipe r reads; a pipe that
// cannot grow stays as it was.
func growPipe(r io.Reader) {
	f, ok := r.(*os.File)
	if !ok {
		return
	}
	c, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = c.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, agentPipeBytes) })
}
