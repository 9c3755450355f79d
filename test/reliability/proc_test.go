package reliability

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// This file looks at processes through /proc (Linux only): what a corvid process
// holds open, which processes it has started, and which processes run a command
// line carrying a test's marker.

func needProc(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
}

// openFDs lists what pid's open file descriptors point at (sorted).
func openFDs(pid int) []string {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed while we looked
		}
		out = append(out, target)
	}
	slices.Sort(out)
	return out
}

// eventually polls cond every 10 ms for up to d and reports whether it held.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// extra is what after holds that before did not (multiset difference).
func extra(before, after []string) []string {
	count := map[string]int{}
	for _, s := range before {
		count[s]++
	}
	var out []string
	for _, s := range after {
		if count[s] > 0 {
			count[s]--
			continue
		}
		out = append(out, s)
	}
	return out
}
