package anthropic

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// idleWatch cancels an attempt when the server has sent nothing for d:
// neither the response headers nor any byte of the body (the API's pings
// count, so a slow but live model is not mistaken for a dead connection).
// A TCP connection can stay open forever while nothing comes, and only
// this notices.
type idleWatch struct {
	d       time.Duration
	timer   *time.Timer
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
	if w.timer != nil && !w.stalled.Load() {
		w.timer.Reset(w.d)
	}
}

func (w *idleWatch) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// fired reports whether the watch cancelled the attempt.
func (w *idleWatch) fired() bool { return w.stalled.Load() }

// middleware is an SDK middleware that counts the response headers and
// every body read as activity.
func (w *idleWatch) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err == nil && res != nil && res.Body != nil {
		w.kick()
		res.Body = &activityBody{ReadCloser: res.Body, watch: w}
	}
	return res, err
}

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
