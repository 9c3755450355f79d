package mcp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newRemoteServer is an MCP server with an echo tool and a greet prompt.
func newRemoteServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "greet", Arguments: []*sdk.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "."}},
			}}, nil
		})
	return s
}

// recorder keeps what the client sent.
type recorder struct {
	mu     sync.Mutex
	auth   []string
	bodies []string
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec.mu.Lock()
		rec.auth = append(rec.auth, r.Header.Get("Authorization"))
		rec.bodies = append(rec.bodies, string(body))
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func TestHTTPServerToolsPromptsHeadersAndListChanged(t *testing.T) {
	t.Parallel()
	srv := newRemoteServer()
	rec := &recorder{}
	ts := httptest.NewServer(rec.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	t.Cleanup(ts.Close) // after the manager's Close, registered later

	changed := newSignal()
	m := startOK(t, []Server{{Name: "remote", Type: TypeHTTP, URL: ts.URL, Headers: []KV{{"Authorization", "Bearer t0k"}}}},
		Options{OnChange: changed.fire})
	if res := run(t, findTool(t, m, "remote__echo"), `{"text":"over http"}`); res.IsError || res.Output != "over http" {
		t.Errorf("echo = %+v", res)
	}
	if text, err := m.GetPrompt(context.Background(), "remote", "greet", map[string]string{"name": "Bo"}); err != nil || text != "Hello, Bo." {
		t.Errorf("GetPrompt = %q, %v", text, err)
	}

	sdk.AddTool(srv, &sdk.Tool{Name: "later", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest, map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "later"}}}, nil, nil
		})
	changed.wait(t, "OnChange after the HTTP server added a tool")
	if res := run(t, findTool(t, m, "remote__later"), `{}`); res.Output != "later" {
		t.Errorf("later = %+v", res)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, a := range rec.auth {
		if a != "Bearer t0k" {
			t.Errorf("request %d: Authorization %q", i, a)
		}
	}
	for _, b := range rec.bodies {
		for _, capability := range []string{`"roots"`, `"sampling"`, `"elicitation"`} {
			if strings.Contains(b, capability) {
				t.Errorf("the client advertised %s: %s", capability, b)
			}
		}
	}
}

// swappable serves through a handler that a test can replace, as if the
// server restarted and forgot its sessions.
type swappable struct{ h atomic.Pointer[http.Handler] }

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*s.h.Load()).ServeHTTP(w, r) }
func (s *swappable) set(h http.Handler)                               { s.h.Store(&h) }

func streamableHandler() http.Handler {
	srv := newRemoteServer()
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
}

func TestHTTPReconnectsAfterTheServerForgotTheSession(t *testing.T) {
	t.Parallel()
	sw := &swappable{}
	sw.set(streamableHandler())
	ts := httptest.NewServer(sw)
	t.Cleanup(ts.Close) // after the manager's Close, registered later

	logs := &logRecorder{}
	m := startOK(t, []Server{{Name: "remote", Type: TypeHTTP, URL: ts.URL}}, Options{Logger: slog.New(logs)})
	echo := findTool(t, m, "remote__echo")
	if res := run(t, echo, `{"text":"one"}`); res.Output != "one" {
		t.Fatalf("echo = %+v", res)
	}
	sw.set(streamableHandler()) // restarted: the session id is unknown now
	if res := run(t, echo, `{"text":"two"}`); res.IsError || res.Output != "two" {
		t.Errorf("echo after the server restarted = %+v", res)
	}
	if !logs.has("mcp server reconnecting") {
		t.Errorf("no reconnection logged: %q", logs.lines)
	}
}

func TestHTTPReconnectsOnTheNextCallAfterTheConnectionDropped(t *testing.T) {
	t.Parallel()
	sw := &swappable{}
	sw.set(streamableHandler())
	ts := httptest.NewServer(sw)
	t.Cleanup(ts.Close) // after the manager's Close, registered later

	logs := &logRecorder{}
	m := startOK(t, []Server{{Name: "remote", Type: TypeHTTP, URL: ts.URL}}, Options{Logger: slog.New(logs)})
	echo := findTool(t, m, "remote__echo")
	if res := run(t, echo, `{"text":"one"}`); res.Output != "one" {
		t.Fatalf("echo = %+v", res)
	}
	sw.set(streamableHandler())
	ts.CloseClientConnections() // the event stream drops and finds no session
	waitDown(t, m.conn("remote"))
	if len(m.Tools()) == 0 {
		t.Errorf("an HTTP server that is down for now lost its tools")
	}
	if res := run(t, echo, `{"text":"two"}`); res.IsError || res.Output != "two" {
		t.Errorf("echo after the drop = %+v", res)
	}
	if !logs.has("mcp server reconnecting") {
		t.Errorf("no reconnection logged: %q", logs.lines)
	}
}

func waitDown(t *testing.T, c *conn) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		down := c.cs == nil
		c.mu.Unlock()
		if down {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the session was never seen to drop")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHTTPServerDownIsAFailedToolResult(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(streamableHandler())
	m := startOK(t, []Server{{Name: "remote", Type: TypeHTTP, URL: ts.URL}}, Options{StartTimeout: 2 * time.Second})
	echo := findTool(t, m, "remote__echo")
	ts.CloseClientConnections()
	ts.Close()
	res := run(t, echo, `{"text":"anyone?"}`)
	if !res.IsError || !strings.HasPrefix(res.Output, `MCP server "remote" is unreachable: `) {
		t.Errorf("call to a server that is gone = %+v", res)
	}
}

func TestSSEServerToolsAndPrompts(t *testing.T) {
	t.Parallel()
	srv := newRemoteServer()
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close) // after the manager's Close, registered later

	m := startOK(t, []Server{{Name: "old", Type: TypeSSE, URL: ts.URL}}, Options{})
	echo := findTool(t, m, "old__echo")
	if res := run(t, echo, `{"text":"over sse"}`); res.IsError || res.Output != "over sse" {
		t.Errorf("echo = %+v", res)
	}
	if text, err := m.GetPrompt(context.Background(), "old", "greet", map[string]string{"name": "Cy"}); err != nil || text != "Hello, Cy." {
		t.Errorf("GetPrompt = %q, %v", text, err)
	}

	ts.CloseClientConnections() // the event stream drops
	waitDown(t, m.conn("old"))
	if res := run(t, echo, `{"text":"again"}`); res.IsError || res.Output != "again" {
		t.Errorf("echo after the stream dropped = %+v", res)
	}
}

func TestHTTPUnreachableAtStartIsAFailure(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	_, failures := start(t, []Server{{Name: "remote", Type: TypeHTTP, URL: url}}, Options{StartTimeout: 2 * time.Second})
	if len(failures) != 1 || !strings.HasPrefix(failures[0].Err.Error(), `MCP server "remote" failed to start: `) {
		t.Fatalf("failures = %+v", failures)
	}
}
