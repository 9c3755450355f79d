package respond

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// entrySuffix names the file a broker leaves in its directory. On Linux
// the socket is in the abstract namespace (no file), so that the shell
// sandbox can shut every sandboxed command out of it with Landlock's
// abstract-socket scope (cmd/corvid sandbox-exec); the entry file only
// says the socket's name, for `corvid respond` to find it.
const entrySuffix = ".addr"

// bindEntry listens on a fresh abstract socket and writes its name to the
// entry file path, which must not exist.
func bindEntry(path string) (*net.UnixListener, error) {
	var r [16]byte
	_, _ = rand.Read(r[:])
	name := fmt.Sprintf("@corvid-%d-%d-%s", os.Getuid(), os.Getpid(), hex.EncodeToString(r[:]))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on control socket: %w", err)
	}
	// O_EXCL and O_NOFOLLOW: never write through anything planted there.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err == nil {
		_, err = f.WriteString(name + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		ln.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("write control socket entry: %w", err)
	}
	return ln, nil
}
