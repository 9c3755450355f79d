package respond

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Place is where the control sockets live (config.Runtime).
type Place struct {
	// Dir is a directory of the user's own, or, when SharedTemp, a
	// temporary directory other users can write in.
	Dir string
	// SharedTemp: no fixed name in Dir can be trusted, since another user
	// may have planted a link under it first. Each broker makes a fresh
	// private directory there, corvid-<uid>-<pid>-<random>, and List and
	// Reply look in every such directory that belongs to the user.
	SharedTemp bool
}

// sharedPrefix starts the names of the brokers' directories in a shared
// temporary directory.
func sharedPrefix() string { return fmt.Sprintf("corvid-%d-", os.Getuid()) }

// brokerDir makes the directory a new broker serves from, and reports
// whether the broker made it for itself (and so removes it on Close).
func (p Place) brokerDir() (string, bool, error) {
	if !p.SharedTemp {
		return p.Dir, false, PrepareDir(p.Dir)
	}
	// MkdirTemp makes a new directory (mode 0700) under a random name and
	// never reuses one that exists: nothing planted can be taken over.
	dir, err := os.MkdirTemp(p.Dir, sharedPrefix()+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", false, fmt.Errorf("create control socket directory: %w", err)
	}
	return dir, true, nil
}

// clientDirs lists the directories to look for brokers in. In a shared
// temporary directory those are the ones that are ours: real directories
// (not links) of our uid that nobody else may enter. Directories whose
// broker process is gone are removed on the way.
func (p Place) clientDirs() []string {
	if !p.SharedTemp {
		return []string{p.Dir}
	}
	matches, _ := filepath.Glob(filepath.Join(p.Dir, sharedPrefix()+"*"))
	var dirs []string
	for _, d := range matches {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
			continue
		}
		if owner, ok := fileOwner(fi); !ok || owner != os.Getuid() {
			continue
		}
		if pid, ok := sharedDirPID(filepath.Base(d)); ok && pid != os.Getpid() && !processAlive(pid) {
			_ = os.RemoveAll(d) // left by a corvid that died without closing
			continue
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// sharedDirPID reads the pid from corvid-<uid>-<pid>-<random>.
func sharedDirPID(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, sharedPrefix())
	if !ok {
		return 0, false
	}
	s, _, _ = strings.Cut(s, "-")
	pid, err := strconv.Atoi(s)
	return pid, err == nil && pid > 0
}
