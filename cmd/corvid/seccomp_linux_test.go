package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The fallback filter refuses AF_UNIX sockets and io_uring, and nothing
// else a sandboxed command commonly needs: socketpair and other families
// still work.
func TestSeccompFallbackRefusesUnixSocketsOnly(t *testing.T) {
	if seccompArch.native == 0 {
		t.Skip("no seccomp filter is built for " + runtime.GOARCH)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSeccompProbe$")
	cmd.Env = append(os.Environ(), "CORVID_SECCOMP_PROBE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	for _, want := range []string{"unix: permission denied", "socketpair: ok", "inet: ok", "io_uring: permission denied"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("probe output lacks %q:\n%s", want, out)
		}
	}
}

// TestHelperSeccompProbe installs the filter on its own thread and tries
// each call from that thread (the filter is per thread until exec).
func TestHelperSeccompProbe(t *testing.T) {
	if os.Getenv("CORVID_SECCOMP_PROBE") == "" {
		t.Skip("helper process only")
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := denyUnixSockets(); err != nil {
		t.Fatal(err)
	}
	say := func(what string, err error) {
		if err == nil {
			fmt.Println(what + ": ok")
		} else {
			fmt.Println(what + ": " + err.Error())
		}
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	say("unix", err)
	if err == nil {
		unix.Close(fd)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	say("socketpair", err)
	if err == nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
	}
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	say("inet", err)
	if err == nil {
		unix.Close(fd)
	}
	var params [120]byte // struct io_uring_params, zeroed
	_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	if errno == 0 {
		say("io_uring", nil)
	} else {
		say("io_uring", errno)
	}
}
