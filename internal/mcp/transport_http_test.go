package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The HTTP transports are tested against the go-sdk's server handlers, an
// implementation of the other side that corvid did not write, driven with
// raw JSON-RPC frames.

// trServer is an SDK server with a tool that reports progress and one that
// asks the client a question (elicitation), plus the sessions it opened.
type trServer struct {
	*sdk.Server
	sessions chan *sdk.ServerSession
}

func newTrServer(t *testing.T) *trServer {
	t.Helper()
	s := &trServer{sessions: make(chan *sdk.ServerSession, 8)}
	s.Server = sdk.NewServer(&sdk.Implementation{Name: "oracle", Version: "1"}, &sdk.ServerOptions{
		InitializedHandler: func(_ context.Context, req *sdk.InitializedRequest) { s.sessions <- req.Session },
	})
	sdk.AddTool(s.Server, &sdk.Tool{Name: "slow", Description: "Report progress, then answer."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			for i := 1; i <= 2; i++ {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 2,
				}); err != nil {
					return nil, nil, err
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
		})
	sdk.AddTool(s.Server, &sdk.Tool{Name: "hi", Description: "Answer at once."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hi"}}}, nil, nil
		})
	sdk.AddTool(s.Server, &sdk.Tool{Name: "ask", Description: "Ask the user's name."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{
				Message: "Your name?",
				RequestedSchema: map[string]any{"type": "object",
					"properties": map[string]any{"name": map[string]any{"type": "string"}}},
			})
			if err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("hello %v", res.Content["name"])}}}, nil, nil
		})
	return s
}

// session waits for the server session the client initialized.
func (s *trServer) session(t *testing.T) *sdk.ServerSession {
	t.Helper()
	select {
	case ss := <-s.sessions:
		return ss
	case <-time.After(10 * time.Second):
		t.Fatal("the server saw no initialized session")
		return nil
	}
}

// trRequest is one HTTP request as the server received it.
type trRequest struct {
	method string
	header http.Header
	body   string
}

// trRecorder keeps every request that reached the server.
type trRecorder struct {
	mu   sync.Mutex
	reqs []trRequest
}

func (rec *trRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, trRequest{r.Method, r.Header.Clone(), string(body)})
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (rec *trRecorder) all() []trRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]trRequest(nil), rec.reqs...)
}

// trHeaderClient sends a configured header with every request, as
// conn.httpClient does.
func trHeaderClient(name, value string) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set(name, value)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// trFrame is a JSON-RPC message as the test reads it.
type trFrame struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// trClient drives a transport with raw frames: one reader goroutine, as
// the client session has, feeding a channel the test reads.
type trClient struct {
	t      *testing.T
	tr     transport
	frames chan trFrame
	ended  chan error // Recv's final error
	nextID int
}

func newTrClient(t *testing.T, tr transport) *trClient {
	c := &trClient{t: t, tr: tr, frames: make(chan trFrame, 64), ended: make(chan error, 1)}
	go func() {
		for {
			msg, err := tr.Recv()
			if err != nil {
				c.ended <- err
				close(c.frames)
				return
			}
			var f trFrame
			if err := json.Unmarshal(msg, &f); err != nil {
				c.ended <- fmt.Errorf("not JSON-RPC: %q", msg)
				close(c.frames)
				return
			}
			c.frames <- f
		}
	}()
	t.Cleanup(func() { tr.Close() })
	return c
}

func (c *trClient) send(v any) error {
	msg, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.tr.Send(context.Background(), msg)
}

func (c *trClient) notify(method string, params any) {
	c.t.Helper()
	if err := c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params}); err != nil {
		c.t.Fatalf("send %s: %v", method, err)
	}
}

// next is the next frame from the server.
func (c *trClient) next() trFrame {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatalf("Recv ended: %v", <-c.ended)
		}
		return f
	case <-time.After(10 * time.Second):
		c.t.Fatal("nothing from the server")
	}
	return trFrame{}
}

// call sends a request and returns its response, with what the server sent
// before it; onRequest answers the server's own requests.
func (c *trClient) call(method string, params any, onRequest func(trFrame) any) (trFrame, []trFrame) {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		c.t.Fatalf("send %s: %v", method, err)
	}
	var before []trFrame
	for {
		f := c.next()
		if f.Method == "" && strings.Trim(string(f.ID), `"`) == fmt.Sprint(id) {
			return f, before
		}
		before = append(before, f)
		if f.Method != "" && f.ID != nil && onRequest != nil {
			if err := c.send(map[string]any{"jsonrpc": "2.0", "id": f.ID, "result": onRequest(f)}); err != nil {
				c.t.Fatalf("answer %s: %v", f.Method, err)
			}
		}
	}
}

// initialize runs the handshake with the given protocol version.
func (c *trClient) initialize(version string) {
	c.t.Helper()
	res, _ := c.call("initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "corvid-test", "version": "1"},
	}, nil)
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if res.Error != nil || json.Unmarshal(res.Result, &r) != nil || r.ProtocolVersion != version {
		c.t.Fatalf("initialize = %s %+v", res.Result, res.Error)
	}
	if v, ok := c.tr.(versioned); ok {
		v.setProtocolVersion(r.ProtocolVersion)
	}
	c.notify("notifications/initialized", map[string]any{})
}

// toolText calls a tool and returns the text of its result.
func (c *trClient) toolText(name string, meta map[string]any, onRequest func(trFrame) any) (string, []trFrame) {
	c.t.Helper()
	params := map[string]any{"name": name, "arguments": map[string]any{}}
	if meta != nil {
		params["_meta"] = meta
	}
	res, before := c.call("tools/call", params, onRequest)
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if res.Error != nil || json.Unmarshal(res.Result, &r) != nil || len(r.Content) != 1 || r.IsError {
		c.t.Fatalf("tools/call %s = %s %+v", name, res.Result, res.Error)
	}
	return r.Content[0].Text, before
}

// answerElicitation accepts an elicitation with the name Bo.
func answerElicitation(t *testing.T) func(trFrame) any {
	return func(f trFrame) any {
		if f.Method != "elicitation/create" {
			t.Errorf("server request %s, want elicitation/create", f.Method)
		}
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Bo"}}
	}
}

func newStreamable(t *testing.T, url string, client *http.Client) *trClient {
	t.Helper()
	tr, err := newStreamableTransport(context.Background(), httpOptions{URL: url, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	return newTrClient(t, tr)
}

func TestStreamableHTTPRunsASessionAgainstTheSDKServer(t *testing.T) {
	t.Parallel()
	srv := newTrServer(t)
	rec := &trRecorder{}
	ts := httptest.NewServer(rec.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil)))
	t.Cleanup(ts.Close) // after the transport's Close, registered later

	c := newStreamable(t, ts.URL, trHeaderClient("Authorization", "Bearer t0k"))
	c.initialize("2025-06-18")
	ss := srv.session(t)

	list, _ := c.call("tools/list", map[string]any{}, nil)
	if !strings.Contains(string(list.Result), `"slow"`) || !strings.Contains(string(list.Result), `"ask"`) {
		t.Errorf("tools/list = %s", list.Result)
	}

	// Progress notifications come on the call's event stream, in order,
	// before the response.
	text, before := c.toolText("slow", map[string]any{"progressToken": "p1"}, nil)
	if text != "done" || len(before) != 2 ||
		before[0].Method != "notifications/progress" || !strings.Contains(string(before[0].Params), `"progress":1`) ||
		before[1].Method != "notifications/progress" || !strings.Contains(string(before[1].Params), `"progress":2`) {
		t.Errorf("slow = %q after %+v", text, before)
	}

	// The server's request inside a call's stream is delivered, and the
	// answer POSTed back reaches the tool.
	if text, _ := c.toolText("ask", nil, answerElicitation(t)); text != "hello Bo" {
		t.Errorf("ask = %q", text)
	}

	// A request the server starts on its own comes on the GET stream.
	pinged := make(chan error, 1)
	go func() { pinged <- ss.Ping(context.Background(), nil) }()
	f := c.next()
	if f.Method != "ping" || f.ID == nil {
		t.Fatalf("from the GET stream: %+v", f)
	}
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": f.ID, "result": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := <-pinged; err != nil {
		t.Errorf("the server's ping: %v", err)
	}

	if err := c.tr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-c.ended; !errors.Is(err, io.EOF) {
		t.Errorf("Recv after Close = %v, want io.EOF", err)
	}
	if err := ss.Wait(); err != nil && !strings.Contains(err.Error(), "closed") {
		t.Logf("server session ended: %v", err)
	}

	reqs := rec.all()
	sessionID := ""
	sawGET, sawDELETE := false, false
	for i, r := range reqs {
		if r.header.Get("Authorization") != "Bearer t0k" {
			t.Errorf("request %d (%s) lacks the configured header", i, r.method)
		}
		switch r.method {
		case http.MethodPost:
			if r.header.Get("Content-Type") != "application/json" || r.header.Get("Accept") != "application/json, text/event-stream" {
				t.Errorf("POST %d headers %v", i, r.header)
			}
			if i == 0 {
				if r.header.Get("Mcp-Session-Id") != "" || r.header.Get("Mcp-Protocol-Version") != "" {
					t.Errorf("initialize carried %v", r.header)
				}
				continue
			}
			if sessionID == "" {
				sessionID = r.header.Get("Mcp-Session-Id")
			}
			if r.header.Get("Mcp-Session-Id") != ss.ID() || r.header.Get("Mcp-Protocol-Version") != "2025-06-18" {
				t.Errorf("POST %d (%s) headers: session %q version %q, want %q 2025-06-18", i, r.body,
					r.header.Get("Mcp-Session-Id"), r.header.Get("Mcp-Protocol-Version"), ss.ID())
			}
		case http.MethodGet:
			sawGET = true
			if r.header.Get("Accept") != "text/event-stream" || r.header.Get("Mcp-Session-Id") != ss.ID() {
				t.Errorf("GET headers %v", r.header)
			}
		case http.MethodDelete:
			sawDELETE = true
			if r.header.Get("Mcp-Session-Id") != ss.ID() {
				t.Errorf("DELETE headers %v", r.header)
			}
		}
	}
	if ss.ID() == "" || sessionID != ss.ID() || !sawGET || !sawDELETE {
		t.Errorf("session %q (server %q), GET %v, DELETE %v", sessionID, ss.ID(), sawGET, sawDELETE)
	}
}

func TestStreamableHTTPWithJSONResponsesAndAStatelessServer(t *testing.T) {
	t.Parallel()
	for _, opts := range []sdk.StreamableHTTPOptions{{JSONResponse: true}, {Stateless: true, JSONResponse: true}, {Stateless: true}} {
		t.Run(fmt.Sprintf("stateless=%v,json=%v", opts.Stateless, opts.JSONResponse), func(t *testing.T) {
			t.Parallel()
			srv := newTrServer(t)
			rec := &trRecorder{}
			ts := httptest.NewServer(rec.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, &opts)))
			t.Cleanup(ts.Close) // after the transport's Close, registered later
			c := newStreamable(t, ts.URL, nil)
			c.initialize("2025-06-18")
			list, _ := c.call("tools/list", map[string]any{}, nil)
			if !strings.Contains(string(list.Result), `"slow"`) {
				t.Errorf("tools/list = %s", list.Result)
			}
			if text, before := c.toolText("hi", nil, nil); text != "hi" || len(before) != 0 {
				t.Errorf("hi = %q after %+v", text, before)
			}
			if !opts.JSONResponse { // notifications need an event stream
				text, before := c.toolText("slow", map[string]any{"progressToken": 7}, nil)
				if text != "done" || len(before) != 2 {
					t.Errorf("slow = %q after %+v", text, before)
				}
			}
			c.tr.Close()
			if err := <-c.ended; !errors.Is(err, io.EOF) {
				t.Errorf("Recv after Close = %v", err)
			}
			for _, r := range rec.all() {
				if opts.Stateless && (r.header.Get("Mcp-Session-Id") != "" || r.method == http.MethodDelete) {
					t.Errorf("a stateless server got %s with session %q", r.method, r.header.Get("Mcp-Session-Id"))
				}
			}
		})
	}
}

func TestStreamableHTTPEndsWithSessionMissingWhenTheServerForgetsTheSession(t *testing.T) {
	t.Parallel()
	srv := newTrServer(t)
	rec := &trRecorder{}
	ts := httptest.NewServer(rec.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil)))
	t.Cleanup(ts.Close) // after the transport's Close, registered later
	c := newStreamable(t, ts.URL, nil)
	c.initialize("2025-06-18")
	srv.session(t).Close()

	msg := []byte(`{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{}}`)
	if err := c.tr.Send(context.Background(), msg); !errors.Is(err, errSessionMissing) {
		t.Fatalf("Send after the server forgot the session = %v, want errSessionMissing", err)
	}
	select {
	case f, ok := <-c.frames:
		if ok {
			t.Fatalf("a frame after the session went: %+v", f)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Recv did not end")
	}
	if err := <-c.ended; !errors.Is(err, errSessionMissing) {
		t.Fatalf("Recv = %v, want errSessionMissing", err)
	}
	c.tr.Close()
	for _, r := range rec.all() {
		if r.method == http.MethodDelete {
			t.Error("Close sent DELETE for a session the server had forgotten")
		}
	}
}

func TestStreamableHTTPNamesTheStatusAndBodyOfAFailedPost(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream exploded\n  while thinking", http.StatusBadGateway)
	}))
	t.Cleanup(ts.Close) // after the transport's Close, registered later
	c := newStreamable(t, ts.URL, nil)
	err := c.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "502") || !strings.Contains(err.Error(), "upstream exploded while thinking") {
		t.Fatalf("Send = %v", err)
	}
}

// A stream that breaks before the response, with no event id to resume
// from, answers the request with an error rather than leaving it waiting.
func TestStreamableHTTPAnswersARequestWhoseStreamBrokeWithAnError(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
	}))
	t.Cleanup(ts.Close) // after the transport's Close, registered later
	c := newStreamable(t, ts.URL, nil)
	res, before := c.call("tools/call", map[string]any{"name": "x"}, nil)
	if len(before) != 1 || before[0].Method != "notifications/message" {
		t.Errorf("before the response: %+v", before)
	}
	if res.Error == nil || !strings.Contains(res.Error.Message, "before the response") {
		t.Errorf("response = %+v", res)
	}
}

// The response that ends a call's stream is found whether the server
// echoes the id as it came or a number as a string; the stream is then
// left, with nothing made up after it.
func TestStreamableHTTPFindsTheResponseByItsID(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		id := string(req.ID)
		if id == "2" {
			id = `"2"`
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the stream stays open: the client must leave it
	}))
	t.Cleanup(ts.Close)
	c := newStreamable(t, ts.URL, nil)
	for _, want := range []string{"1", `"2"`} {
		if res, before := c.call("ping", map[string]any{}, nil); res.Error != nil || len(before) != 0 || string(res.ID) != want {
			t.Errorf("ping = %+v after %+v", res, before)
		}
	}
	left := make(chan struct{})
	go func() { c.tr.(*streamableTransport).wg.Wait(); close(left) }()
	select {
	case <-left: // both stream readers returned
	case <-time.After(10 * time.Second):
		t.Fatal("a stream reader still waits on a stream whose response came")
	}
	select {
	case f := <-c.frames:
		t.Errorf("after the responses: %+v", f)
	default:
	}
}

// Several goroutines send at once while one receives; Close then ends
// Recv and every stream goroutine (Close waits for them).
func TestStreamableHTTPConcurrentCallsThenCloseUnblocksRecv(t *testing.T) {
	t.Parallel()
	srv := newTrServer(t)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil))
	t.Cleanup(ts.Close) // after the transport's Close, registered later
	tr, err := newStreamableTransport(context.Background(), httpOptions{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	c := newTrClient(t, tr)
	c.initialize("2025-06-18")

	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":%d}}}`, 100+i, i)
			if err := tr.Send(context.Background(), []byte(msg)); err != nil {
				t.Errorf("Send %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	answered := map[string]bool{}
	progress := 0
	for len(answered) < n {
		f := c.next()
		switch {
		case f.Method == "notifications/progress":
			progress++
		case f.Method == "" && f.Error == nil && strings.Contains(string(f.Result), "done"):
			answered[string(f.ID)] = true
		default:
			t.Fatalf("unexpected %+v", f)
		}
	}
	if progress != 2*n {
		t.Errorf("%d progress notifications, want %d", progress, 2*n)
	}

	// Recv is blocked in the reader goroutine now; Close must end it.
	done := make(chan struct{})
	go func() { tr.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return: a stream goroutine is still running")
	}
	if err := <-c.ended; !errors.Is(err, io.EOF) {
		t.Errorf("Recv after Close = %v", err)
	}
	if err := tr.Send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/x"}`)); err == nil {
		t.Error("Send after Close succeeded")
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A server may end a call's event stream before the response (SEP-1699);
// with event IDs the transport resumes it with a GET naming the last one,
// after the delay the server asked for, and the response arrives on the
// resumed stream.
func TestStreamableHTTPResumesACallsStreamWithLastEventID(t *testing.T) {
	t.Parallel()
	srv := newTrServer(t)
	sdk.AddTool(srv.Server, &sdk.Tool{Name: "hop", Description: "Break the stream midway."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			progress := func(p float64) error {
				return req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: p, Total: 2})
			}
			if err := progress(1); err != nil {
				return nil, nil, err
			}
			req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: time.Millisecond})
			if err := progress(2); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "resumed"}}}, nil, nil
		})
	rec := &trRecorder{}
	ts := httptest.NewServer(rec.wrap(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server },
		&sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)})))
	t.Cleanup(ts.Close) // after the transport's Close, registered later
	tr, err := newStreamableTransport(context.Background(), httpOptions{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	// The server's retry field (1 ms) sets the delay; without it, the
	// transport would wait 30 s, longer than the test waits for a frame.
	tr.(*streamableTransport).retryDelay = time.Hour
	c := newTrClient(t, tr)
	c.initialize("2025-11-25")

	text, before := c.toolText("hop", map[string]any{"progressToken": "h"}, nil)
	if text != "resumed" || len(before) != 2 || !strings.Contains(string(before[1].Params), `"progress":2`) {
		t.Errorf("hop = %q after %+v", text, before)
	}
	resumed := false
	for _, r := range rec.all() {
		if r.method == http.MethodGet && r.header.Get("Last-Event-ID") != "" {
			resumed = true
		}
	}
	if !resumed {
		t.Error("no GET carried Last-Event-ID")
	}
}

// The standalone GET stream is reopened when it drops, with Last-Event-ID
// while the server names event IDs; a 404 to a reopening GET (a GET was
// served before, so the server does offer one) means the server forgot
// the session, and Recv ends with errSessionMissing.
func TestStreamableHTTPReopensTheGETStreamUntilTheSessionIsGone(t *testing.T) {
	t.Parallel()
	gets := make(chan string, 8)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			w.Header().Set("Mcp-Session-Id", "s1")
			w.WriteHeader(http.StatusAccepted)
		case http.MethodGet:
			last := r.Header.Get("Last-Event-ID")
			gets <- last
			if r.Header.Get("Mcp-Session-Id") != "s1" {
				http.Error(w, "no session", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			switch len(gets) {
			case 1:
				fmt.Fprint(w, "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n/one\"}\n\n")
			case 2:
				fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"n/two\"}\n\n"+
					"id\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n/three\"}\n\n") // an empty id resets it
			default:
				http.Error(w, "session not found", http.StatusNotFound)
			}
		}
	}))
	t.Cleanup(ts.Close)
	tr, err := newStreamableTransport(context.Background(), httpOptions{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	tr.(*streamableTransport).retryDelay = time.Millisecond
	c := newTrClient(t, tr)
	c.notify("notifications/initialized", map[string]any{})
	for _, want := range []string{"n/one", "n/two", "n/three"} {
		if f := c.next(); f.Method != want {
			t.Fatalf("got %+v, want %s", f, want)
		}
	}
	select {
	case err := <-c.ended:
		if !errors.Is(err, errSessionMissing) {
			t.Errorf("Recv = %v, want errSessionMissing", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Recv did not end after the GET's 404")
	}
	for _, want := range []string{"", "e1", ""} {
		if got := <-gets; got != want {
			t.Errorf("GET with Last-Event-ID %q, want %q", got, want)
		}
	}
}

// A GET stream that keeps ending without bringing anything is reopened a
// bounded number of times, then given up quietly.
func TestStreamableHTTPStopsReopeningAnEmptyGETStream(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	gets := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			gets++
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": nothing\n\n")
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(ts.Close)
	tr, err := newStreamableTransport(context.Background(), httpOptions{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	st := tr.(*streamableTransport)
	st.retryDelay = time.Millisecond
	c := newTrClient(t, tr)
	c.notify("notifications/initialized", map[string]any{})
	st.wg.Wait() // the GET goroutine gave up
	mu.Lock()
	defer mu.Unlock()
	if gets != 1+st.maxRetries {
		t.Errorf("%d GETs, want %d", gets, 1+st.maxRetries)
	}
	select {
	case err := <-c.ended:
		t.Errorf("Recv ended: %v", err)
	default:
	}
}

// Send's context bounds a POST only until its answer starts: cancelled
// before that, Send returns and the transport goes on working.
func TestStreamableHTTPSendGivesUpWithItsContext(t *testing.T) {
	t.Parallel()
	srv := newTrServer(t)
	sdkHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil)
	arrived := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Query().Get("stall") != "" {
			io.ReadAll(r.Body) // then the server notices the client leave
			close(arrived)
			<-r.Context().Done()
			return
		}
		sdkHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	stalled, err := newStreamableTransport(context.Background(), httpOptions{URL: ts.URL + "?stall=1"})
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	if err := stalled.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("Send with its context cancelled = %v", err)
	}

	// On a live server, a context that ends once Send returned does not cut
	// the call's event stream.
	c := newStreamable(t, ts.URL, nil)
	c.initialize("2025-06-18")
	ctx, cancel = context.WithCancel(context.Background())
	msg := `{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":1}}}`
	if err := c.tr.Send(ctx, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	cancel()
	for {
		if f := c.next(); f.Method == "" {
			if string(f.ID) != "50" || !strings.Contains(string(f.Result), "done") {
				t.Errorf("response %+v", f)
			}
			break
		}
	}
}

// transportGoroutines lists the goroutines running code of the HTTP
// transports.
func transportGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "mcp.(*streamableTransport)") || strings.Contains(g, "mcp.(*sseTransport)") || strings.Contains(g, "mcp.(*inbox)") {
			found = append(found, g)
		}
	}
	return found
}

// Not parallel: it counts goroutines while no other test runs.
func TestHTTPTransportsLeaveNoGoroutineAfterClose(t *testing.T) {
	srv := newTrServer(t)
	release := make(chan struct{})
	sdk.AddTool(srv.Server, &sdk.Tool{Name: "hang", Description: "Report progress, then wait."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1})
			select {
			case <-ctx.Done():
			case <-release:
			}
			return &sdk.CallToolResult{}, nil, nil
		})
	defer close(release)
	streamable := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil))
	t.Cleanup(sse.Close)

	for _, open := range []func() *trClient{
		func() *trClient { return newStreamable(t, streamable.URL, nil) },
		func() *trClient { return newSSE(t, context.Background(), sse.URL, nil) },
	} {
		c := open()
		c.initialize("2025-06-18")
		if err := c.send(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
			"params": map[string]any{"name": "hang", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": 1}}}); err != nil {
			t.Fatal(err)
		}
		if f := c.next(); f.Method != "notifications/progress" {
			t.Fatalf("got %+v", f)
		}
		if len(transportGoroutines()) == 0 {
			t.Fatal("no transport goroutine while a call is open; this test checks nothing")
		}
		c.tr.Close() // with the call's stream (and the GET stream) open
		if err := <-c.ended; !errors.Is(err, io.EOF) {
			t.Errorf("Recv after Close = %v", err)
		}
		if left := transportGoroutines(); len(left) > 0 {
			t.Errorf("after Close:\n%s", strings.Join(left, "\n\n"))
		}
	}
}

// A GET the server does not serve is not a lost session, even when it
// answers 404 rather than 405: the session goes on over POST.
func TestStreamableHTTPGoesOnWhenTheServerRefusesTheGETStream(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusMethodNotAllowed, http.StatusNotFound, http.StatusInternalServerError} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				http.Error(w, "no", status)
				return
			}
			w.Header().Set("Mcp-Session-Id", "s1")
			if strings.Contains(r.Header.Get("Content-Type"), "json") && r.Header.Get("Mcp-Session-Id") == "" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `[{"jsonrpc":"2.0","method":"n/first"},{"jsonrpc":"2.0","id":2,"result":{}}]`) // a batch
		}))
		t.Cleanup(ts.Close)
		c := newStreamable(t, ts.URL, nil)
		c.initialize("2025-06-18")
		c.tr.(*streamableTransport).wg.Wait() // the GET goroutine has given up
		if res, before := c.call("ping", map[string]any{}, nil); res.Error != nil || len(before) != 1 || before[0].Method != "n/first" {
			t.Errorf("GET answered %d: ping = %+v after %+v", status, res, before)
		}
		c.tr.Close()
		if err := <-c.ended; !errors.Is(err, io.EOF) {
			t.Errorf("GET answered %d: Recv = %v, want io.EOF", status, err)
		}
	}
}

// A resumed call stream that breaks again without naming a new event ID is
// resumed from the last ID it had.
func TestStreamableHTTPResumesAgainFromTheLastEventID(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lastIDs []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Method == http.MethodPost {
			fmt.Fprint(w, "id: p1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n/one\"}\n\n")
			return
		}
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		n := len(lastIDs)
		mu.Unlock()
		if n == 1 {
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"n/two\"}\n\n")
			return
		}
		fmt.Fprint(w, "id: p2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	t.Cleanup(ts.Close)
	tr, err := newStreamableTransport(context.Background(), httpOptions{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	tr.(*streamableTransport).retryDelay = time.Millisecond
	c := newTrClient(t, tr)
	res, before := c.call("ping", map[string]any{}, nil)
	if res.Error != nil || len(before) != 2 || before[0].Method != "n/one" || before[1].Method != "n/two" {
		t.Errorf("ping = %+v after %+v", res, before)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(lastIDs, ",") != "p1,p1" {
		t.Errorf("GETs with Last-Event-ID %q, want p1 twice", lastIDs)
	}
}
