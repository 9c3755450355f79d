package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func newSSE(t *testing.T, ctx context.Context, url string, client *http.Client) *trClient {
	t.Helper()
	tr, err := newSSETransport(ctx, httpOptions{URL: url, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	return newTrClient(t, tr)
}

func TestSSETransportRunsASessionAgainstTheSDKServer(t *testing.T) {
	t.Parallel()
	srv := newTrServer(t)
	rec := &trRecorder{}
	ts := httptest.NewServer(rec.wrap(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil)))
	t.Cleanup(ts.Close) // after the transport's Close, registered later

	// The context given to the constructor bounds only connecting: the
	// session goes on after it ends.
	ctx, cancel := context.WithCancel(context.Background())
	c := newSSE(t, ctx, ts.URL+"/sse", trHeaderClient("Authorization", "Bearer t0k"))
	cancel()

	c.initialize("2024-11-05")
	ss := srv.session(t)
	list, _ := c.call("tools/list", map[string]any{}, nil)
	if !strings.Contains(string(list.Result), `"slow"`) {
		t.Errorf("tools/list = %s", list.Result)
	}
	text, before := c.toolText("slow", map[string]any{"progressToken": "p"}, nil)
	if text != "done" || len(before) != 2 || before[0].Method != "notifications/progress" {
		t.Errorf("slow = %q after %+v", text, before)
	}
	if text, _ := c.toolText("ask", nil, answerElicitation(t)); text != "hello Bo" {
		t.Errorf("ask = %q", text)
	}

	c.tr.Close()
	if err := <-c.ended; !errors.Is(err, io.EOF) {
		t.Errorf("Recv after Close = %v, want io.EOF", err)
	}
	if err := ss.Wait(); err != nil {
		t.Logf("server session ended: %v", err)
	}
	posts := 0
	for i, r := range rec.all() {
		if r.header.Get("Authorization") != "Bearer t0k" {
			t.Errorf("request %d (%s) lacks the configured header", i, r.method)
		}
		if r.method == http.MethodPost {
			posts++
			if r.header.Get("Content-Type") != "application/json" {
				t.Errorf("POST %d headers %v", i, r.header)
			}
		} else if r.header.Get("Accept") != "text/event-stream" {
			t.Errorf("GET headers %v", r.header)
		}
	}
	if posts != 6 { // initialize, initialized, tools/list, two calls, the elicitation's answer
		t.Errorf("%d POSTs, want 6", posts)
	}
}

// sseEndpointServer sends the endpoint event with the given data and then
// one message; it records the path each POST went to.
func sseEndpointServer(t *testing.T, endpoint string, posted chan<- string) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posted <- r.URL.RequestURI()
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, ": hello\nevent: endpoint\ndata: %s\n\n", strings.ReplaceAll(endpoint, "ORIGIN", "http://"+r.Host))
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestSSETransportResolvesTheEndpointOnTheSameOriginOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ endpoint, want string }{
		{"/messages?session=1", "/messages?session=1"},
		{"messages?session=2", "/mcp/messages?session=2"}, // relative to /mcp/sse
		{"ORIGIN/abs/messages?s=3", "/abs/messages?s=3"},
	} {
		posted := make(chan string, 1)
		ts := sseEndpointServer(t, tc.endpoint, posted)
		c := newSSE(t, context.Background(), ts.URL+"/mcp/sse", nil)
		if f := c.next(); f.Method != "notifications/message" {
			t.Errorf("%s: first message %+v", tc.endpoint, f)
		}
		c.notify("notifications/initialized", map[string]any{})
		if got := <-posted; got != tc.want {
			t.Errorf("endpoint %q: POSTed to %q, want %q", tc.endpoint, got, tc.want)
		}
		c.tr.Close()
	}

	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	ts := sseEndpointServer(t, other.URL+"/messages", make(chan string, 1))
	if _, err := newSSETransport(context.Background(), httpOptions{URL: ts.URL}); err == nil || !strings.Contains(err.Error(), "is not on") {
		t.Errorf("an endpoint on another origin: %v", err)
	}
}

func TestSSETransportConnectingIsBoundedByTheContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": no endpoint yet\n\n")
		w.(http.Flusher).Flush()
		cancel() // the caller gives up while the stream stays open
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close) // after the transport's Close, registered later
	if _, err := newSSETransport(ctx, httpOptions{URL: ts.URL}); !errors.Is(err, context.Canceled) {
		t.Errorf("connect without an endpoint event = %v", err)
	}
}

func TestSSETransportReportsFailuresAndTheStreamsEnd(t *testing.T) {
	t.Parallel()
	refused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such server", http.StatusNotFound)
	}))
	t.Cleanup(refused.Close)
	if _, err := newSSETransport(context.Background(), httpOptions{URL: refused.URL}); err == nil ||
		!strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "no such server") {
		t.Errorf("connect to a 404 = %v", err)
	}

	// A server that refuses a POST and then ends its stream.
	end := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Error(w, "bad message", http.StatusBadRequest)
			close(end)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: /post\n\n")
		w.(http.Flusher).Flush()
		<-end
	}))
	t.Cleanup(ts.Close) // after the transport's Close, registered later
	c := newSSE(t, context.Background(), ts.URL, nil)
	if err := c.send(map[string]any{"jsonrpc": "2.0", "method": "x"}); err == nil ||
		!strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "bad message") {
		t.Errorf("a refused POST = %v", err)
	}
	select {
	case err := <-c.ended:
		if !errors.Is(err, io.EOF) {
			t.Errorf("Recv after the stream ended = %v, want io.EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Recv did not end with the stream")
	}
}
