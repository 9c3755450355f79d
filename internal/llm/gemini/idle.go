package gemini

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
	return &llm.Error{Provider: "gemini", Retryable: true,
		Message: fmt.Sprintf("%s stream stalled: no data for %s", m.title, m.idleTimeout())}
}
