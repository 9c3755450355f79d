package anthropic

import (
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/corvid-agent/corvid/internal/llm"
)

// idleMiddleware is an SDK middleware that counts the response headers
// and every body read as activity (the API's pings count, so a slow but
// live model is not mistaken for a dead connection).
func idleMiddleware(w *llm.IdleWatch) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return w.WatchResponse(next(req))
	}
}
