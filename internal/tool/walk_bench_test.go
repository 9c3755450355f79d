//go:build unix

package tool

import (
	"context"
	"io/fs"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWalkModCache walks the Go module cache honouring its .gitignore
// files, as grep and glob do, without reading any file: the cost of
// listing directories and matching ignore rules. Besides wall time it
// reports the process's CPU time per walk, steadier than wall time on a
// shared machine.
func BenchmarkWalkModCache(b *testing.B) {
	dir := modCache(b)
	var entries atomic.Int64
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	for b.Loop() {
		entries.Store(0)
		err := walkTree(context.Background(), dir, walkOptions{ignore: true}, func(string, string, fs.DirEntry) bool {
			entries.Add(1)
			return true
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(entries.Load()), "entries")
}
