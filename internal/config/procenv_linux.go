//go:build linux

package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Linux keeps a second copy of the environment that os.Unsetenv does not
// touch: the block the kernel wrote at exec, which /proc/PID/environ
// shows to every process of the same user (and to root), children
// included. hideExecEnvironment clears the withheld entries of that block
// in place, then makes corvid non-dumpable, as ssh-agent does, so that
// same-user processes can neither read /proc/PID/mem nor ptrace corvid to
// find the keys in its heap.

// hideExecEnvironment zeroes every entry of the exec-time environment block
// whose name withheld reports, and marks the process non-dumpable.
func hideExecEnvironment(withheld func(name string) bool) error {
	errBlock := eraseExecBlock(withheld)
	// After the block: a non-dumpable process's /proc/self/mem belongs to
	// root, so an unprivileged corvid could no longer open it.
	errDump := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if errDump != nil {
		errDump = fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", errDump)
	}
	return errors.Join(errBlock, errDump)
}

// eraseExecBlock overwrites the withheld entries of [env_start, env_end)
// (fields 50 and 51 of /proc/self/stat, Linux 3.5+) with NUL bytes through
// /proc/self/mem. The kernel reads /proc/PID/environ from that memory, so
// the entries are gone from it; a C getenv would find an empty string.
// Go's own environment is a copy and is untouched.
func eraseExecBlock(withheld func(name string) bool) error {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return fmt.Errorf("read the environment's address: %w", err)
	}
	start, end, err := envBounds(stat)
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open /proc/self/mem: %w", err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return fmt.Errorf("read the exec-time environment: %w", err)
	}
	if !clearWithheld(block, withheld) {
		return nil
	}
	if _, err := mem.WriteAt(block, start); err != nil {
		return fmt.Errorf("clear the exec-time environment: %w", err)
	}
	return nil
}

// clearWithheld zeroes the NAME=VALUE entries of block (NUL-separated)
// whose name withheld reports, and says whether it changed any.
func clearWithheld(block []byte, withheld func(name string) bool) bool {
	changed := false
	for rest := block; len(rest) > 0; {
		entry, tail, _ := bytes.Cut(rest, []byte{0})
		if name, _, ok := bytes.Cut(entry, []byte{'='}); ok && withheld(string(name)) {
			clear(entry)
			changed = true
		}
		rest = tail
	}
	return changed
}

// envBounds reads env_start and env_end from the text of /proc/self/stat.
// The command name (field 2) may hold spaces and parentheses, so fields are
// counted after its last ')'.
func envBounds(stat []byte) (start, end int64, err error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, errors.New("/proc/self/stat does not parse")
	}
	fields := bytes.Fields(stat[i+1:]) // fields[0] is field 3 (state)
	const envStart, envEnd = 50 - 3, 51 - 3
	if len(fields) <= envEnd {
		return 0, 0, errors.New("/proc/self/stat has no env_start (Linux before 3.5)")
	}
	start, err1 := strconv.ParseInt(string(fields[envStart]), 10, 64)
	end, err2 := strconv.ParseInt(string(fields[envEnd]), 10, 64)
	if err1 != nil || err2 != nil || end < start || end-start > 64<<20 {
		return 0, 0, fmt.Errorf("/proc/self/stat gives no usable environment bounds (%q, %q)", fields[envStart], fields[envEnd])
	}
	return start, end, nil
}
