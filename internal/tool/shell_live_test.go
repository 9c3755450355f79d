package tool

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLiveOutputKeepsTheTailFromALineStart(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 100<<10; i++ {
		b.WriteString("line of output number ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n")
	}
	b.WriteString("the last line\n")
	got := liveText(b.String())
	if len(got) > liveTail+len("…\n") || !strings.HasPrefix(got, "…\nline of output") || !strings.HasSuffix(got, "the last line") {
		t.Errorf("live text of %d bytes starts %q, ends %q: want at most %d bytes, the tail, from a line start", len(got), got[:min(30, len(got))], got[max(0, len(got)-20):], liveTail)
	}
	if short := liveText("a\nb\n"); short != "a\nb" {
		t.Errorf("short output shown as %q", short)
	}
}

// Updates come while the command runs and never after stop returns.
func TestLiveOutputStopsBeforeTheResult(t *testing.T) {
	terms := NewLocalTerminals()
	defer terms.Close()
	id, err := terms.Create(context.Background(), TerminalRequest{Command: "sh", Args: []string{"-c", "echo one; sleep 0.6; echo two; sleep 5"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var shown []string
	stopped := false
	stop := streamOutput(context.Background(), terms, id, func(c []Content) {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			t.Error("an update came after stop returned")
		}
		shown = append(shown, c[0].Text)
	})
	time.Sleep(time.Second)
	stop()
	mu.Lock()
	stopped = true
	got := append([]string(nil), shown...)
	mu.Unlock()
	time.Sleep(2 * liveEvery)
	if len(got) < 2 || !strings.Contains(got[0], "one") || strings.Contains(got[0], "two") || !strings.Contains(got[len(got)-1], "two") {
		t.Errorf("updates %q: want one showing \"one\", then one showing \"two\"", got)
	}
}
