package tool

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// A command's output while it runs, for clients that cannot show the
// terminal itself (ACP terminal content): every liveEvery, if the output
// grew, its last liveTail bytes go to the tool call as content, through
// Call.Live, which shows them without storing them. The final result
// replaces them, and is what a replay shows.
const (
	liveEvery = 250 * time.Millisecond
	liveTail  = 16 << 10
)

// streamOutput shows terminal id's output through show until the returned
// stop is called; stop waits for an update being sent, so that none
// follows the call's final one.
func streamOutput(ctx context.Context, terms Terminals, id string, show func([]Content)) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(liveEvery)
		defer tick.Stop()
		var last string
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			out, err := terms.Output(ctx, id)
			if err != nil {
				return
			}
			text := liveText(out.Output)
			if text == "" || text == last {
				continue
			}
			last = text
			select {
			case <-done:
				return
			default:
			}
			show([]Content{{Type: ContentText, Text: "```\n" + text + "\n```"}})
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// liveText is the end of out, at most liveTail bytes, from a line start
// when one is near, marked "…" when cut.
func liveText(out string) string {
	out = strings.TrimRight(out, "\n")
	if len(out) <= liveTail {
		return strings.ToValidUTF8(out, "\uFFFD")
	}
	cut := len(out) - liveTail
	if i := strings.IndexByte(out[cut:], '\n'); i >= 0 && i < 1<<10 {
		cut += i + 1
	}
	for cut < len(out) && !utf8.RuneStart(out[cut]) {
		cut++
	}
	return "…\n" + strings.ToValidUTF8(out[cut:], "\uFFFD")
}
