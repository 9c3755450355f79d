//go:build unix

package tui

import (
	"syscall"
	"time"
)

// processUsage is this process's CPU time and context switches (voluntary
// and not) so far, for benchmarks that report them per operation.
func processUsage() (cpu time.Duration, switches int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Nvcsw + ru.Nivcsw)
}
