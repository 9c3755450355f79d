package config

import "testing"

// BenchmarkEraseExecBlock is the start-up cost of clearing the exec-time
// environment (read /proc/self/stat, read and write the block).
func BenchmarkEraseExecBlock(b *testing.B) {
	for b.Loop() {
		if err := eraseExecBlock(func(name string) bool { return name == "CORVID_BENCH_NOTHING" }); err != nil {
			b.Fatal(err)
		}
	}
}
