package codemode

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// budget is a script's memory allowance: the Go heap may grow by limit
// bytes over base, the heap when the script started. Two checks share it:
//
//   - reserve, called by the guards (guard.go) with an operation's
//     estimated allocation before the operation runs, so that one builtin
//     call cannot allocate gigabytes before anything looks (x.replace,
//     "a" * n, sep.join, "%s" % big, list(range(n)), ...);
//   - a watchdog that samples the heap every few milliseconds, for growth
//     one small allocation at a time (append in a loop, comprehensions).
//
// The heap is the measure because Starlark accounts nothing itself; other
// work of the process counts too, which errs on the side of stopping.
type budget struct {
	limit, base int64
	last        atomic.Int64 // the latest heap reading
	over        func(detail string) error
}

// Reservations below smallAlloc are not checked one by one (the watchdog
// sees them add up); those of freshAbove or more read the heap afresh
// instead of trusting the watchdog's last sample.
const (
	smallAlloc = 64 << 10
	freshAbove = 4 << 20
)

func heapAlloc() int64 {
	// runtime.ReadMemStats, not runtime/metrics: that package's init builds
	// its tables in every corvid start (0.6 ms), for a reading only scripts
	// need. Its brief stop-the-world costs a running script microseconds.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func newBudget(limit int64, over func(detail string) error) *budget {
	b := &budget{limit: limit, over: over}
	b.base = heapAlloc()
	b.last.Store(b.base)
	return b
}

// reserve returns nil when n more bytes fit in the budget, and otherwise
// stops the script (over) and returns its error. what names the operation
// for the message.
func (b *budget) reserve(what string, n int64) error {
	if n < smallAlloc {
		return nil
	}
	if n > b.limit {
		return b.refuse(what, n)
	}
	if n < freshAbove && b.last.Load()-b.base+n <= b.limit {
		return nil
	}
	h := heapAlloc()
	b.last.Store(h)
	if h-b.base+n <= b.limit {
		return nil
	}
	// Garbage the script left behind counts until it is collected: collect
	// before refusing. This runs only near the limit.
	runtime.GC()
	h = heapAlloc()
	b.last.Store(h)
	if h-b.base+n <= b.limit {
		return nil
	}
	return b.refuse(what, n)
}

func (b *budget) refuse(what string, n int64) error {
	return b.over(fmt.Sprintf("%s would allocate about %s", what, byteSize(n)))
}

// watch samples the heap every 5 ms and calls over once it has grown past
// the limit; the returned func stops it.
func (b *budget) watch(over func()) func() {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				h := heapAlloc()
				b.last.Store(h)
				if h-b.base > b.limit {
					over()
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// byteSize is n in the largest unit that keeps it at or above one.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
