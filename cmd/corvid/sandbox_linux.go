package main

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Landlock access rights (linux/landlock.h). corvid handles the file
// rights of ABI 3 (up to truncate) and, without network, TCP bind and
// connect (ABI 4); a handled right is refused unless a rule grants it.
const (
	fsRead       = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsFile       = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsHandled    = 0x1fff | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE // EXECUTE … MAKE_SYM, REFER, TRUNCATE
	fsWriteNoRef = fsHandled &^ unix.LANDLOCK_ACCESS_FS_REFER
	netHandled   = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
)

// restrictSelf applies the sandbox to the calling thread, which must stay
// locked to its goroutine until it execs. Reads stay allowed everywhere;
// writes are allowed under write (workspace-write) and to the harmless
// devices; without net, TCP connect and bind are refused. No best effort:
// a kernel that cannot enforce all of it is an error, so a sandbox that is
// asked for is never silently missing.
//
// The system calls are made directly rather than through go-landlock: its
// all-threads restriction links libcap's psx, which forces the external
// linker in a cgo build and made the idle process 22 MiB larger (file-backed
// pages, measured with the IdleRSS benchmark); one thread that then execs
// needs none of that.
//
// The command is also kept off corvid's control socket, which is an
// abstract unix socket (internal/respond): with Landlock ABI 6 (Linux
// 6.12) by scoping abstract sockets to the sandbox, so it reaches none made
// outside it; on older kernels, or when unixFilter is "seccomp", by a
// seccomp filter that refuses every AF_UNIX socket (denyUnixSockets).
func restrictSelf(mode string, write []string, net bool, unixFilter string) error {
	need := 4
	if net {
		need = 3
	}
	abi := landlockABI()
	if abi < need {
		return fmt.Errorf("this kernel offers Landlock ABI %d, and %d is needed", abi, need)
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: fsHandled}
	if !net {
		attr.Handled_access_net = netHandled // no rule grants them: none allowed
	}
	// Only the first two fields unless the scope is used: older kernels
	// know no more of the struct.
	size := unsafe.Offsetof(attr.Scoped)
	scoped := abi >= 6 && unixFilter != "seccomp"
	if scoped {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		size = unsafe.Sizeof(attr)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)

	if err := allowBeneath(ruleset, fsRead, false, "/"); err != nil {
		return err
	}
	if err := allowBeneath(ruleset, fsFile, true, "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"); err != nil {
		return err
	}
	if mode == tool.SandboxWorkspaceWrite {
		if err := allowBeneath(ruleset, fsHandled, true, write...); err != nil {
			return err
		}
		if err := allowBeneath(ruleset, fsWriteNoRef, true, "/dev/pts", "/dev/shm"); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	if !scoped {
		if err := denyUnixSockets(); err != nil {
			return fmt.Errorf("keep the command off corvid's control socket (Landlock ABI %d has no abstract-socket scope): %w", abi, err)
		}
	}
	return nil
}

// allowBeneath grants access under each path (to the file itself, for a
// file: only the rights a file can have). A missing path is skipped when
// optional.
func allowBeneath(ruleset int, access uint64, optional bool, paths ...string) error {
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if optional && errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("sandbox path %s: %w", p, err)
		}
		var st unix.Stat_t
		allowed := access
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			allowed &= unix.LANDLOCK_ACCESS_FS_EXECUTE | fsFile
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: allowed, Parent_fd: int32(fd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		unix.Close(fd)
		if errno != 0 {
			return fmt.Errorf("landlock_add_rule %s: %w", p, errno)
		}
	}
	return nil
}

// landlockABI is the kernel's Landlock ABI version; 0 when it has none.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}
