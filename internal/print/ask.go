package print

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/termsafe"
)

// ttyAsker asks permission questions on a terminal (--ask): y allows once,
// a allows for the rest of the session, anything else (or end of input)
// refuses.
func ttyAsker(tty io.ReadWriter) func(context.Context, agent.ToolCall) (agent.Answer, error) {
	var mu sync.Mutex
	in := bufio.NewReader(tty)
	return func(ctx context.Context, call agent.ToolCall) (agent.Answer, error) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return agent.RejectOnce, nil
		}
		detail := ""
		if len(call.RawInput) > 0 && len(call.RawInput) < 300 {
			detail = " " + string(call.RawInput)
		}
		fmt.Fprintf(tty, "corvid: allow %s?%s [y]es, [a]lways, [N]o: ", termsafe.String(call.Title), termsafe.String(detail))
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return agent.RejectOnce, nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return agent.AllowOnce, nil
		case "a", "always":
			return agent.AllowAlways, nil
		}
		return agent.RejectOnce, nil
	}
}
