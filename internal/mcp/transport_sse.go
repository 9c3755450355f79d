package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"

	"github.com/corvid-agent/corvid/internal/llm/sse"
)

// The HTTP+SSE transport of protocol 2024-11-05: a GET opens an event
// stream whose first event, "endpoint", names the URL to POST messages to;
// every message of the server comes as a "message" event on that stream.
type sseTransport struct {
	endpoint string
	client   *http.Client
	in       *inbox

	// ctx lives until Close: the event stream and every POST hang on it.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // the stream reader returned
	once   sync.Once
}

// newSSETransport connects: it opens the event stream and waits for the
// endpoint event. ctx bounds only that; the stream then lives until Close.
func newSSETransport(ctx context.Context, o httpOptions) (transport, error) {
	base, err := url.Parse(o.URL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("the MCP server's URL %q is not an absolute URL", o.URL)
	}
	client := o.Client
	if client == nil {
		client = http.DefaultClient
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t := &sseTransport{client: client, in: newInbox(), ctx: life, cancel: cancel, done: make(chan struct{})}

	stop := context.AfterFunc(ctx, cancel)
	body, r, err := t.connect(base)
	if !stop() {
		// ctx ended while connecting; cancel has already run.
		if body != nil {
			body.Close()
		}
		return nil, fmt.Errorf("connect to the MCP server at %s: %w", o.URL, context.Cause(ctx))
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("connect to the MCP server at %s: %w", o.URL, err)
	}
	go t.read(body, r)
	return t, nil
}

// connect opens the stream and reads up to the endpoint event; messages
// before it (there should be none) are queued.
func (t *sseTransport) connect(base *url.URL) (io.ReadCloser, *sse.Reader, error) {
	req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, base.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	res, err := t.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		defer res.Body.Close()
		return nil, nil, statusError(http.MethodGet, res)
	}
	if mediaType, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mediaType != "text/event-stream" {
		res.Body.Close()
		return nil, nil, fmt.Errorf("the MCP server answered GET with content type %q, not an event stream", res.Header.Get("Content-Type"))
	}
	r := sse.NewReader(res.Body)
	for {
		data, complete, err := r.Next()
		if errors.Is(err, sse.ErrNotSSE) {
			continue
		}
		if err == nil && !complete {
			err = io.EOF
		}
		if err != nil {
			res.Body.Close()
			if errors.Is(err, io.EOF) {
				err = errors.New("the event stream ended before the endpoint event")
			}
			return nil, nil, err
		}
		switch r.Event() {
		case "endpoint":
			endpoint, err := resolveEndpoint(base, string(bytes.TrimSpace(data)))
			if err != nil {
				res.Body.Close()
				return nil, nil, err
			}
			t.endpoint = endpoint
			return res.Body, r, nil
		case "message":
			if len(bytes.TrimSpace(data)) > 0 {
				t.in.putPayload(data, nil)
			}
		}
	}
}

// resolveEndpoint resolves the endpoint event's URL against the stream's.
// It must stay on the same origin: corvid sends the configured headers
// (often credentials) with every POST, and a server must not be able to
// redirect them elsewhere.
func resolveEndpoint(base *url.URL, ref string) (string, error) {
	u, err := base.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("the MCP server's endpoint %q: %w", ref, err)
	}
	if u.Scheme != base.Scheme || u.Host != base.Host {
		return "", fmt.Errorf("the MCP server's endpoint %q is not on %s://%s", ref, base.Scheme, base.Host)
	}
	return u.String(), nil
}

// read delivers the stream's message events until it ends.
func (t *sseTransport) read(body io.ReadCloser, r *sse.Reader) {
	defer close(t.done)
	defer body.Close()
	for {
		data, complete, err := r.Next()
		if errors.Is(err, sse.ErrNotSSE) {
			continue
		}
		if err == nil && !complete {
			err = io.EOF // an event cut off by the stream's end is dropped
		}
		if err != nil {
			if t.ctx.Err() != nil {
				err = io.EOF // Close ended it
			}
			t.in.end(err, false)
			return
		}
		if r.Event() == "message" && len(bytes.TrimSpace(data)) > 0 {
			t.in.putPayload(data, nil)
		}
	}
}

func (t *sseTransport) Send(ctx context.Context, msg []byte) error {
	if t.ctx.Err() != nil {
		return errClosed
	}
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel) // Close ends a POST in flight
	defer stop()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, t.endpoint, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := t.client.Do(req)
	if err != nil {
		if t.ctx.Err() != nil {
			return errClosed
		}
		return err
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return statusError(http.MethodPost, res)
	}
	// The answer comes on the event stream; the body ("Accepted") is
	// drained so that the connection can be reused.
	io.Copy(io.Discard, io.LimitReader(res.Body, httpExcerptBytes))
	return nil
}

func (t *sseTransport) Recv() ([]byte, error) { return t.in.recv() }

func (t *sseTransport) Close() error {
	t.once.Do(func() {
		t.cancel()
		t.in.end(io.EOF, true)
		<-t.done
	})
	return nil
}
