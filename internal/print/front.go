package print

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/termsafe"
)

// front is the session's front end: events go to the writer, tool calls to
// the progress line, and permission questions are refused.
type front struct {
	out      writer
	stderr   io.Writer
	progress bool
	ask      func(context.Context, agent.ToolCall) (agent.Answer, error) // --ask; nil refuses

	mu     sync.Mutex
	titles map[string]string // tool call id → title, for progress lines
}

func (f *front) Emit(ev agent.Event) {
	// A sub-agent's text is not the answer: its parent's task call
	// returns what matters of it.
	if ev.Member == nil || ev.Kind != agent.EventMessageChunk {
		f.out.event(ev)
	}
	if !f.progress || ev.ToolCall == nil {
		return
	}
	tc := ev.ToolCall
	f.mu.Lock()
	defer f.mu.Unlock()
	if tc.Title != "" {
		f.titles[tc.ID] = tc.Title
	}
	title := termsafe.String(f.titles[tc.ID]) // stderr is a terminal
	switch {
	case ev.Kind == agent.EventToolCall:
		fmt.Fprintf(f.stderr, "· %s\n", title)
	case tc.Status == agent.ToolFailed:
		fmt.Fprintf(f.stderr, "✗ %s\n", title)
	}
}

// RequestPermission asks on the terminal with --ask; otherwise it refuses,
// since nobody is there to ask: the reason names the flags and the config
// rule that would let this call run.
func (f *front) RequestPermission(ctx context.Context, call agent.ToolCall) (agent.Answer, error) {
	if f.ask != nil {
		return f.ask(ctx, call)
	}
	name := call.Name
	if name == "" {
		name = "TOOL"
	}
	reason := fmt.Sprintf("corvid is running non-interactively, so %q was not run (it needs approval). To allow it, rerun with --allow %s, add %q to allow in the [permissions] section of the config, or rerun with --yolo to allow every tool call.", call.Title, name, name)
	fmt.Fprintf(f.stderr, "corvid: refused %s: rerun with --allow %s (or --yolo) to allow it\n", termsafe.String(call.Title), name)
	return agent.RejectOnce, &agent.Refusal{Reason: reason}
}
