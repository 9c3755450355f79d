package llm

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// IdleWatch cancels a streaming attempt when the server has sent nothing
// for a while: neither response headers nor any byte of the body. A TCP
// connection can stay open forever while nothing comes, and only this
// notices. Time the caller spends handling what arrived (between Pause and
// Resume) is not the server's silence and does not count. Every provider
// uses it the same way: Kick on headers, WatchBody on the body, Fired to
// tell a stall from a cancel.
type IdleWatch struct {
	d       time.Duration
	mu      sync.Mutex
	timer   *time.Timer
	paused  bool
	stopped bool
	stalled atomic.Bool
}

// NewIdleWatch starts watching; cancel ends the attempt when it stalls. A d
// of zero or less disables the watch.
func NewIdleWatch(d time.Duration, cancel context.CancelFunc) *IdleWatch {
	w := &IdleWatch{d: d}
	if d > 0 {
		w.timer = time.AfterFunc(d, func() {
			w.stalled.Store(true)
			cancel()
		})
	}
	return w
}

// Kick records activity.
func (w *IdleWatch) Kick() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.paused && !w.stopped && !w.stalled.Load() {
		w.timer.Reset(w.d)
	}
}

// Pause stops the clock while the caller handles what was received.
func (w *IdleWatch) Pause() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = true
	w.timer.Stop()
}

// Resume restarts the clock from zero.
func (w *IdleWatch) Resume() {
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

// Stop ends the watch for good: the stream is over.
func (w *IdleWatch) Stop() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}

// Fired reports whether the watch cancelled the attempt.
func (w *IdleWatch) Fired() bool { return w.stalled.Load() }

// WatchBody returns body with every successful read counted as activity.
func (w *IdleWatch) WatchBody(body io.ReadCloser) io.ReadCloser {
	return &activityBody{ReadCloser: body, watch: w}
}

// WatchResponse counts a response's arrival and its body reads as activity;
// it suits an HTTP middleware.
func (w *IdleWatch) WatchResponse(res *http.Response, err error) (*http.Response, error) {
	if err == nil && res != nil && res.Body != nil {
		w.Kick()
		res.Body = w.WatchBody(res.Body)
	}
	return res, err
}

type activityBody struct {
	io.ReadCloser
	watch *IdleWatch
}

func (b *activityBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.watch.Kick()
	}
	return n, err
}
