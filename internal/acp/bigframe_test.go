package acp

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
)

// heldMiB is what the Go runtime holds of the OS's memory and has not
// given back, in MiB: its mapped memory less what it released.
func heldMiB() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return float64(s[0].Value.Uint64()-s[1].Value.Uint64()) / (1 << 20)
}

// A huge request (a prompt of many MiB) is decoded and answered, and the
// memory it took is back with the OS when its answer arrives: the line,
// its params and what the handler decoded from them are not kept, and the
// runtime does not sit on the freed pages for minutes.
func TestHugeRequestGivesItsMemoryBackWhenAnswered(t *testing.T) {
	const size = 48 << 20
	p := startConn(t, &testHandler{request: func(_ context.Context, _ string, params json.RawMessage) (any, error) {
		var v struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(params, &v); err != nil {
			return nil, err
		}
		return map[string]int{"len": len(v.Text)}, nil
	}}, Options{})
	p.send(`{"jsonrpc":"2.0","id":0,"method":"warm","params":{"text":"x"}}`)
	p.recv()
	runtime.GC()
	before := heldMiB()

	line := `{"jsonrpc":"2.0","id":1,"method":"big","params":{"text":"` + strings.Repeat("a", size) + `"}}`
	p.send(line)
	line = ""
	f := p.recv()
	if got := string(f["result"]); got != `{"len":50331648}` {
		t.Fatalf("answer %s", got)
	}
	if over := heldMiB() - before; over > 16 {
		// The test's own copy of the line (written, then dropped) is
		// garbage too; a runtime that kept the rest holds several times
		// the 48 MiB.
		t.Errorf("the runtime still holds %.0f MiB more than before a %d MiB request, once it was answered; want it given back (≤ 16 MiB)", over, size>>20)
	}
}
