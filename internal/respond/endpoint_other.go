//go:build !linux

package respond

import (
	"fmt"
	"net"
	"os"
)

// entrySuffix names the socket file a broker serves in its directory.
const entrySuffix = ".sock"

// bindEntry listens on a socket file at path.
func bindEntry(path string) (*net.UnixListener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("control socket path %s is longer than %d bytes; set XDG_RUNTIME_DIR or CORVID_HOME to a shorter directory", path, maxSocketPath)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on control socket: %w", err)
	}
	// The directory is 0700 already; the mode is a second fence.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("restrict control socket: %w", err)
	}
	return ln, nil
}
