package openai

import (
	"fmt"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
)

// DefaultIdleTimeout is how long a stream may stay silent (no byte from the
// server) before the attempt fails with a retryable error, unless
// llm.ProviderConfig.IdleTimeout says otherwise.
const DefaultIdleTimeout = 60 * time.Second

// idleTimeout is the configured timeout or the default.
func (m *model) idleTimeout() time.Duration {
	if m.cfg.IdleTimeout > 0 {
		return m.cfg.IdleTimeout
	}
	return DefaultIdleTimeout
}

// errStalled is the error of an attempt the idle watch ended.
func (m *model) errStalled() error {
	return &llm.Error{Provider: m.p.Name, Retryable: true,
		Message: fmt.Sprintf("%s stream stalled: no data for %s", m.p.DisplayName(), m.idleTimeout())}
}

// yieldAll passes evs on with the watch paused, so a slow consumer is not
// taken for a silent server. It reports whether the consumer wants more.
func yieldAll(w *llm.IdleWatch, yield func(llm.Event, error) bool, evs []llm.Event) bool {
	if len(evs) == 0 {
		return true
	}
	w.Pause()
	defer w.Resume()
	for _, ev := range evs {
		if !yield(ev, nil) {
			return false
		}
	}
	return true
}
