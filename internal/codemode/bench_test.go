package codemode

import (
	"context"
	"testing"
	"time"
)

// BenchmarkCancelLatency measures session/cancel's part inside a script:
// from cancelling the context of a script stuck in a loop to Run's return
// (the budget is 100 ms for the whole cancel; this is microseconds).
func BenchmarkCancelLatency(b *testing.B) {
	var total time.Duration
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		var at time.Time
		go func() {
			<-started
			at = time.Now()
			cancel() // Run returns after this, so it sees at
		}()
		fn := Func{Name: "started", Call: func(context.Context, map[string]any) (string, error) { close(started); return "", nil }}
		_, err := Run(ctx, "started()\nwhile True:\n  pass", []Func{fn}, Limits{MaxSteps: 1 << 62})
		if err != ErrCancelled {
			b.Fatal(err)
		}
		total += time.Since(at)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "us/cancel")
}

// BenchmarkStartUp is a script's fixed cost: a fresh interpreter with 16
// functions running a 20-call loop.
func BenchmarkStartUp(b *testing.B) {
	var funcs []Func
	for _, n := range []string{"read", "write", "edit", "grep", "glob", "ls", "shell", "fetch", "todo", "delete", "move", "skill", "a", "b", "c", "d"} {
		funcs = append(funcs, Func{Name: n, Params: []string{"path"}, Call: func(_ context.Context, args map[string]any) (string, error) { return "x", nil }})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), "out = []\nfor i in range(20):\n  out.append(read('f' + str(i)))\nlen(out)", funcs, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
