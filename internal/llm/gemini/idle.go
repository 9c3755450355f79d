package gemini

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corvid-agent/corvid/internal/llm"
)

// DefaultIdleTimeout is how long a stream may stay silent (no byte from the
// server) before the attempt fails with a retryable error, unless
// llm.ProviderConfig.IdleTimeout says otherwise.
const DefaultIdleTimeout = 60 * time.Second

// idleWatch cancels an attempt when the server has sent nothing for d:
// neither the response headers nor any byte of the body. A TCP connection
// can stay open forever while nothing comes, and only this notices. The
// time the caller spends consuming events (between pause and resume) is
// not the server's silence and does not count.
//
// Stream counts the response headers and every byte of the body
// (activityBody) as activity.
type idleWatch struct {
	d       time.Duration
	mu      sync.Mutex
	timer   *time.Timer
	paused  bool
	stopped bool
	stalled atomic.Bool
}

// newIdleWatch starts watching; d <= 0 disables the watch.
func newIdleWatch(d time.Duration, cancel context.CancelFunc) *idleWatch {
	w := &idleWatch{d: d}
	if d > 0 {
		w.timer = time.AfterFunc(d, func() {
			w.stalled.Store(true)
			cancel()
		})
	}
	return w
}

// kick records activity.
func (w *idleWatch) kick() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.paused && !w.stopped && !w.stalled.Load() {
		w.timer.Reset(w.d)
	}
}

// pause stops the clock while the caller handles what was received.
func (w *idleWatch) pause() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = true
	w.timer.Stop()
}

// resume restarts the clock from zero.
func (w *idleWatch) resume() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = false
	if !w.stopped && !w.stalled.Load() {
		w.timer.Reset(w.d)
	}
}

// stop ends the watch for good: the stream is over.
func (w *idleWatch) stop() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}

// fired reports whether the watch cancelled the attempt.
func (w *idleWatch) fired() bool { return w.stalled.Load() }

type activityBody struct {
	io.ReadCloser
	watch *idleWatch
}

func (b *activityBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.watch.kick()
	}
	return n, err
}

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
