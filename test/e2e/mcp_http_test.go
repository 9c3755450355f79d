package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// mcpHTTPServer is a real MCP server (the same go-sdk) over streamable HTTP
// or SSE, recording the headers it received.
func mcpHTTPServer(t *testing.T, sse bool) (url string, headers func() []http.Header) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	type pingIn struct {
		Word string `json:"word"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "Answer pong and the word."},
		func(_ context.Context, _ *sdk.CallToolRequest, in pingIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong " + in.Word}}}, nil, nil
		})
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	if sse {
		h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	}
	var mu sync.Mutex
	var seen []http.Header
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.CloseClientConnections() // a streamable GET may still be open
		ts.Close()
	})
	return ts.URL, func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return append([]http.Header(nil), seen...)
	}
}

// The editor's HTTP and SSE MCP servers: their tools reach the model, a
// call goes through the permission gate and returns the server's answer,
// and the configured headers are sent.
func TestMCPOverHTTPAndSSE(t *testing.T) {
	for _, kind := range []string{"http", "sse"} {
		t.Run(kind, func(t *testing.T) {
			url, headers := mcpHTTPServer(t, kind == "sse")
			r := startMCP(t)
			sid := r.newSession(t, map[string]any{"type": kind, "name": "remote", "url": url,
				"headers": []any{map[string]any{"name": "X-Corvid-Test", "value": "yes"}}})
			r.api.Enqueue(
				fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_1", "remote__ping", `{"word":"over-`+kind+`"}`)}},
				fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}},
			)
			if stop, rerr := r.Prompt(r.ctx, sid, "ping it"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			reqs := r.api.Requests()
			if len(reqs) != 2 || !strings.Contains(string(reqs[0].Raw), `"remote__ping"`) {
				t.Fatalf("the %s MCP tool was not offered to the model", kind)
			}
			if !strings.Contains(string(reqs[1].Raw), "pong over-"+kind) {
				t.Errorf("the server's answer did not reach the model: %s", reqs[1].Raw)
			}
			if n := len(r.Permissions()); n != 1 {
				t.Errorf("%d permission requests, want 1", n)
			}
			got := headers()
			if len(got) == 0 {
				t.Fatal("the MCP server got no request")
			}
			for _, h := range got {
				if h.Get("X-Corvid-Test") != "yes" {
					t.Errorf("a request to the MCP server lacked the configured header: %v", h)
					break
				}
			}
		})
	}
}
