package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// RuntimeDir is where a running corvid keeps sockets that live only as long
// as the process (the control socket of `corvid respond`):
// $CORVID_HOME/run when CORVID_HOME is set, else $XDG_RUNTIME_DIR/corvid,
// else $TMPDIR/corvid-<uid> (os.TempDir when TMPDIR is unset). The uid
// suffix keeps users apart in a shared temporary directory; the caller
// creates the directory with mode 0700.
func RuntimeDir(env Env) string {
	if h := env.Getenv("CORVID_HOME"); h != "" {
		return filepath.Join(h, "run")
	}
	if x := env.Getenv("XDG_RUNTIME_DIR"); x != "" {
		return filepath.Join(x, "corvid")
	}
	tmp := env.Getenv("TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	return filepath.Join(tmp, fmt.Sprintf("corvid-%d", os.Getuid()))
}
