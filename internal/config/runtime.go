package config

import (
	"os"
	"path/filepath"
)

// Runtime is where a running corvid keeps sockets that live only as long as
// the process (the control socket of `corvid respond`).
type Runtime struct {
	// Dir is a directory of the user's own: $CORVID_HOME/run when
	// CORVID_HOME is set, else $XDG_RUNTIME_DIR/corvid. When neither is
	// set it is the shared temporary directory ($TMPDIR, else os.TempDir),
	// and SharedTemp is true.
	Dir string
	// SharedTemp says Dir is writable by other users: no fixed name in it
	// can be trusted (another user may plant a link there first), so each
	// corvid process makes a fresh private directory of its own in it, and
	// `corvid respond` looks in each of those that belongs to the user
	// (internal/respond.Place).
	SharedTemp bool
}

// RuntimePlace says where the control sockets live (see Runtime).
func RuntimePlace(env Env) Runtime {
	if h := env.Getenv("CORVID_HOME"); h != "" {
		return Runtime{Dir: filepath.Join(h, "run")}
	}
	if x := env.Getenv("XDG_RUNTIME_DIR"); x != "" {
		return Runtime{Dir: filepath.Join(x, "corvid")}
	}
	tmp := env.Getenv("TMPDIR")
	if tmp == "" {
		tmp = os.TempDir()
	}
	return Runtime{Dir: tmp, SharedTemp: true}
}

// ServeSocket is the default socket of `corvid serve` (and of `corvid acp
// --connect auto`): serve.sock in the runtime directory when that is the
// user's own, else in the data directory's run/ (never a fixed name in the
// shared temporary directory, where another user could plant it first).
func ServeSocket(env Env) string {
	if rt := RuntimePlace(env); !rt.SharedTemp {
		return filepath.Join(rt.Dir, "serve.sock")
	}
	return filepath.Join(DataDir(env), "run", "serve.sock")
}
