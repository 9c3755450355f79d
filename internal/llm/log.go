package llm

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"time"
)

// LevelTrace is below slog.LevelDebug: what it logs (whole requests) may
// hold the user's code and prompts, so only `--log-level trace` shows it.
const LevelTrace = slog.LevelDebug - 4

// WithLog wraps m so that each request (each attempt, when inside
// WithRetry) is logged at debug level with its model and sizes, and its end
// with the duration, stop reason, token counts or failure. Only at
// LevelTrace is the request itself logged. Keys never reach a Request, so
// neither level can log one.
func WithLog(m Model, l *slog.Logger) Model { return &logModel{inner: m, log: l} }

type logModel struct {
	inner Model
	log   *slog.Logger
}

func (l *logModel) Info() ModelInfo { return l.inner.Info() }

func (l *logModel) Stream(ctx context.Context, req Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		id := l.inner.Info().ID
		if l.log.Enabled(ctx, slog.LevelDebug) {
			l.log.DebugContext(ctx, "model request", "model", id, "messages", len(req.Messages),
				"tools", len(req.Tools), "system_bytes", len(req.System), "content_bytes", contentBytes(req.Messages),
				"max_tokens", req.MaxTokens, "thinking_budget", req.ThinkingBudget)
		}
		if l.log.Enabled(ctx, LevelTrace) {
			body, _ := json.Marshal(req)
			l.log.Log(ctx, LevelTrace, "model request body", "model", id, "request", string(body))
		}
		start := time.Now()
		var usage Usage
		for ev, err := range l.inner.Stream(ctx, req) {
			switch {
			case err != nil:
				l.log.DebugContext(ctx, "model request failed", "model", id, "duration", time.Since(start), "cause", err.Error())
			case ev.Type == EventUsage:
				usage = ev.Usage
			case ev.Type == EventStop:
				l.log.DebugContext(ctx, "model response", "model", id, "duration", time.Since(start), "stop", string(ev.StopReason),
					"input_tokens", usage.InputTokens, "output_tokens", usage.OutputTokens,
					"cache_read_tokens", usage.CacheReadTokens, "cache_write_tokens", usage.CacheWriteTokens)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// contentBytes is the size of what the messages carry: text, tool input
// and image data.
func contentBytes(ms []Message) int {
	n := 0
	var add func(p Part)
	add = func(p Part) {
		n += len(p.Text) + len(p.Input) + len(p.Data)
		for _, img := range p.Images {
			add(img)
		}
	}
	for _, m := range ms {
		for _, p := range m.Parts {
			add(p)
		}
	}
	return n
}
