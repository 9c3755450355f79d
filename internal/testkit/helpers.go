package testkit

// Helpers every end-to-end package needs besides the editor: a script file for
// `-m script:FILE`, an isolated environment for corvid commands started by hand,
// and the /proc walks that prove a process tree is gone. They lived in five test
// packages before; keep one copy here.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// WriteScript writes script to a fresh file and returns its path, for `corvid acp -m
// script:PATH`. A []byte or string is written as it is (a script read from a scenario
// file); anything else is marshalled as JSON (a script-format value, see
// docs/script-format.md).
func WriteScript(t testing.TB, script any) string {
	t.Helper()
	var b []byte
	switch s := script.(type) {
	case []byte:
		b = s
	case string:
		b = []byte(s)
	default:
		var err error
		if b, err = json.Marshal(script); err != nil {
			t.Fatalf("testkit: marshal script: %v", err)
		}
	}
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return path
}

// IsolatedEnvAt is the environment [Start] would give an agent whose HOME is home (the
// test's environment minus real homes, XDG dirs, CORVID_* settings and provider
// credentials, plus fresh dirs under home), followed by extra KEY=VALUE entries. Use it
// for a corvid process a test starts itself in a home it chose; [IsolatedEnv] makes the
// home too.
func IsolatedEnvAt(home string, extra ...string) []string {
	return buildEnv(os.Environ(), home, Options{Env: extra})
}

// ProcessGone reports whether pid no longer runs: it does not exist or is a zombie
// (exited, not yet reaped by a parent the test does not control). Linux only: it reads
// /proc, and elsewhere every pid counts as gone.
func ProcessGone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	state, _ := statFields(stat)
	return state == "Z"
}

// Alive returns the pids of pids that still run (see [ProcessGone]).
func Alive(pids []int) []int {
	var out []int
	for _, p := range pids {
		if !ProcessGone(p) {
			out = append(out, p)
		}
	}
	return out
}

// WaitGone waits until every pid is gone (see [ProcessGone]) and reports true, or fails
// the test with t.Errorf naming what and the survivors after 5 s and reports false. It
// polls /proc: the kernel offers no portable wait for a process that is not our child.
func WaitGone(t testing.TB, what string, pids ...int) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := Alive(pids)
		if len(left) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: processes %v still run", what, left)
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ChildrenOf lists pid's direct children (from /proc/PID/task/*/children).
func ChildrenOf(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(field); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// Descendants returns every live process below pid, at any depth, found by walking the
// parent links of all of /proc (so a grandchild whose parent already exited is not
// found: it was re-parented away from pid).
func Descendants(pid int) []int {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		state, ppid := statFields(b)
		if state == "" || state == "Z" {
			continue
		}
		parent[p] = ppid
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
			if _, ok := parent[q]; !ok {
				break
			}
		}
	}
	return out
}

// PidsOf lists the live processes whose executable is path.
func PidsOf(path string) []int {
	return FindProcesses(func(pid int) bool {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		return err == nil && exe == path
	})
}

// ProcessesMatching lists the live processes whose command line contains marker (what
// `pgrep -f marker` prints, without needing procps).
func ProcessesMatching(marker string) []int {
	return FindProcesses(func(pid int) bool {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		return err == nil && bytes.Contains(b, []byte(marker))
	})
}

// FindProcesses lists the live processes other than the test itself for which match
// holds, in /proc order.
func FindProcesses(match func(pid int) bool) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if match(pid) && !ProcessGone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// statFields returns the state and parent pid from the text of /proc/PID/stat,
// "pid (comm) state ppid ...", where comm may hold spaces and parentheses.
func statFields(stat []byte) (state string, ppid int) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return "", 0
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid
}
