package main

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccomp return values and the offsets in struct seccomp_data.
const (
	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000
	offNr           = 0
	offArch         = 4
	offArg0         = 16 // low 32 bits on little-endian amd64 and arm64
	x32SyscallBit   = 0x40000000
)

// denyUnixSockets installs a seccomp filter on the calling thread (which
// then execs; the filter is inherited and cannot be removed) that refuses
// to create AF_UNIX sockets: socket(AF_UNIX, …) fails with EACCES, and so
// does socketcall(SYS_SOCKET) of 32-bit programs (which seccomp cannot look
// into). io_uring_setup is refused too: io_uring can make sockets without
// a socket system call. socketpair stays: an unnamed pair reaches nobody.
// It is the sandbox's way to keep commands off corvid's abstract control
// socket where Landlock cannot scope abstract sockets (ABI < 6). No_new_privs
// must be set already.
func denyUnixSockets() error {
	a := seccompArch
	if a.native == 0 {
		return fmt.Errorf("no seccomp filter is built for this architecture")
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		deny = seccompRetErrno | uint32(unix.EACCES)
	)
	// Each jump names its target by label; jumps go forward only.
	type ins struct {
		code   uint16
		k      uint32
		jt, jf string // labels; "" = the next instruction
		label  string
	}
	prog := []ins{
		{code: ld, k: offArch},
		{code: jeq, k: a.native, jf: "compat"},
		{code: ld, k: offNr},
		{code: and, k: ^uint32(x32SyscallBit)},
		{code: jeq, k: unix.SYS_IO_URING_SETUP, jt: "deny"},
		{code: jeq, k: a.socket, jf: "allow"},
		{code: ld, k: offArg0},
		{code: jeq, k: unix.AF_UNIX, jt: "deny", jf: "allow"},
		{code: jeq, k: a.compat, jf: "denyAll", label: "compat"},
		{code: ld, k: offNr},
		{code: jeq, k: unix.SYS_IO_URING_SETUP, jt: "deny"}, // the same number in both compat ABIs
		{code: jeq, k: a.compatSocket, jt: "compatArg0"},
		{code: jeq, k: a.compatSocketcall, jf: "allow"},
		// socket's domain AF_UNIX, or socketcall's call SYS_SOCKET: both 1.
		{code: ld, k: offArg0, label: "compatArg0"},
		{code: jeq, k: 1, jt: "deny", jf: "allow"},
		{code: ret, k: seccompRetAllow, label: "allow"},
		{code: ret, k: deny, label: "deny"},
		{code: ret, k: seccompRetErrno | uint32(unix.EPERM), label: "denyAll"}, // an unknown architecture: nothing runs
	}
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		off := func(label string) uint8 {
			if label == "" {
				return 0
			}
			return uint8(at[label] - i - 1)
		}
		filter[i] = unix.SockFilter{Code: in.code, K: in.k, Jt: off(in.jt), Jf: off(in.jf)}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
	}
	return nil
}

// unixFilterBuilt reports whether denyUnixSockets has a filter for this
// architecture.
func unixFilterBuilt() bool { return seccompArch.native != 0 }

// seccompArchInfo names an architecture's audit arch and socket system
// call numbers, native and 32-bit compat.
type seccompArchInfo struct {
	native, socket                         uint32
	compat, compatSocket, compatSocketcall uint32
}
