// Package stackstart grows the main goroutine's stack once, before the
// program's package initialisers run, so that it is not grown again and
// again while they run.
//
// A goroutine starts with a small stack and the runtime doubles it each time
// a call does not fit, copying it and walking every frame on it. For each
// frame the walk reads that function's tables in the binary's pclntab,
// scattered over its 6.6 MB; on Linux every page touched there maps its
// 64 KiB neighbourhood into the process (fault-around). Package init and
// the acp start-up (kong, config, the store) run on the main goroutine, and
// its growths faulted in about ten separate pclntab pages before main alone
// (perf record -e page-faults -d). With this package first, an idle
// `corvid acp` after session/new holds about 0.5 MiB less (median of 8 runs
// each, 17.0 → 16.5 MiB; issue 18's budget is 16 MiB).
//
// Growing the stack to its working size while only two frames are on it
// costs one copy of those two frames and 64 KiB of zeroed stack, which
// start-up would have touched anyway.
//
// The package imports nothing, so it is initialised as soon as the runtime
// is; cmd/corvid imports it first (TestStackGrownBeforeOtherPackagesInit
// checks the order).
package stackstart

// frame is the size of the one frame that makes the runtime grow the stack
// to 128 KiB in one step: deep enough for kong, the TOML decoder and
// SQLite's translated C, whose frames are large.
const frame = 64 << 10

var sink byte

func init() { grow() }

//go:noinline
func grow() {
	var buf [frame]byte
	touch(&buf)
}

// touch keeps buf (and so the frame) alive without letting it escape to
// the heap.
//
//go:noinline
func touch(b *[frame]byte) { sink += b[frame/2] }
