package llm

import "context"

// headersKey is the context key of WithHeaders.
type headersKey struct{}

// WithHeaders returns a context whose model requests carry h as extra HTTP
// headers: per-request values such as a turn's X-Conversation-Request-ID
// (CodeBuddy's client turn id). Providers that speak HTTP set them after
// their own headers and before the configured ones ([providers.NAME.headers]
// still wins); the scripted model has no requests and ignores them.
func WithHeaders(ctx context.Context, h map[string]string) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, headersKey{}, h)
}

// SetContextHeaders sets the headers WithHeaders put in ctx on h (an
// http.Header).
func SetContextHeaders(ctx context.Context, h interface{ Set(key, value string) }) {
	m, _ := ctx.Value(headersKey{}).(map[string]string)
	for k, v := range m {
		h.Set(k, v)
	}
}
