package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor fails the test unless ch delivers within the wait limit.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// slowHandler defers "slow" requests until their ctx ends, reporting each
// start on started; "partial" does the same but answers with a result.
func slowHandler(started chan<- string) *testHandler {
	return &testHandler{request: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "slow", "partial":
			return Deferred(func() (any, error) {
				started <- method
				<-ctx.Done()
				if method == "partial" {
					return map[string]string{"stopReason": "cancelled"}, nil
				}
				return nil, ctx.Err()
			}), nil
		case "blocking": // not deferred: holds the dispatcher
			started <- method
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return "ok", nil
	}}
}

func TestCancelRequestCancelsDeferredHandlerAndStillAnswers(t *testing.T) {
	started := make(chan string, 4)
	p := startConn(t, slowHandler(started), Options{})

	for _, id := range []string{`7`, `"req-8"`} {
		p.send(request(id, "slow"))
		waitFor(t, started, "the deferred handler")
		p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId": ` + id + ` }}`)
		f := p.recv()
		if f.id() != id || f.code(t) != CodeRequestCancelled {
			t.Fatalf("cancelled request %s: got %v, want -32800", id, f)
		}
	}

	// A handler may answer a cancelled request with a partial result.
	p.send(request("9", "partial"))
	waitFor(t, started, "the deferred handler")
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":9}}`)
	if f := p.recv(); f.id() != "9" || string(f["result"]) != `{"stopReason":"cancelled"}` {
		t.Fatalf("partial result: got %v", f)
	}
}

func TestInvalidUTF8StringIDIsEchoedAsUTF8(t *testing.T) {
	started := make(chan string, 4)
	p := startConn(t, slowHandler(started), Options{})
	bad := "\"a\xffb\"" // ACP frames must be UTF-8; this id cannot be echoed as is
	p.send(request(bad, "slow"))
	waitFor(t, started, "the deferred handler")
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + bad + `}}`)
	f := p.recv()
	if f.id() != "\"a\ufffdb\"" || f.code(t) != CodeRequestCancelled {
		t.Fatalf("got %v, want -32800 for id \"a\ufffdb\"", f)
	}
}

func TestCancelRequestReachesHandlerHoldingTheDispatcher(t *testing.T) {
	started := make(chan string, 4)
	p := startConn(t, slowHandler(started), Options{})
	p.send(request("1", "blocking"))
	waitFor(t, started, "the blocking handler")
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`)
	if f := p.recv(); f.id() != "1" || f.code(t) != CodeRequestCancelled {
		t.Fatalf("got %v, want -32800 for id 1", f)
	}
}

func TestCancelRequestForUnknownOrMalformedIDIsIgnored(t *testing.T) {
	started := make(chan string, 4)
	p := startConn(t, slowHandler(started), Options{})
	p.send(request("1", "slow"))
	waitFor(t, started, "the deferred handler")
	for _, params := range []string{`{"requestId":2}`, `{"requestId":"1"}`, `{}`, `null`, `[1]`, `{"requestId":{}}`} {
		p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":` + params + `}`)
	}
	p.send(request("3", "ping"))
	if f := p.recv(); f.id() != "3" {
		t.Fatalf("got %v, want the ping's result first: no cancel may hit id 1", f)
	}
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`)
	if f := p.recv(); f.id() != "1" || f.code(t) != CodeRequestCancelled {
		t.Fatalf("got %v, want -32800 for id 1", f)
	}
}

func TestCancelRequestReachesNewestRequestWithAReusedID(t *testing.T) {
	release := make(chan struct{})
	started := make(chan string, 4)
	h := slowHandler(started)
	inner := h.request
	h.request = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "held" {
			return Deferred(func() (any, error) { started <- method; <-release; return "held done", nil }), nil
		}
		return inner(ctx, method, params)
	}
	p := startConn(t, h, Options{})
	p.send(request("1", "held"))
	waitFor(t, started, "the first request")
	p.send(request("1", "slow")) // same id, against the spec
	waitFor(t, started, "the second request")
	close(release)
	if f := p.recv(); string(f["result"]) != `"held done"` {
		t.Fatalf("got %v, want the first request's result", f)
	}
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`)
	if f := p.recv(); f.id() != "1" || f.code(t) != CodeRequestCancelled {
		t.Fatalf("got %v, want -32800 for the second request", f)
	}
}

func TestCancelRequestSentAsRequestIsAnswered(t *testing.T) {
	// $/cancel_request is a notification; a peer that sends it with an id
	// still gets an answer, or it would wait forever.
	p := startConn(t, &testHandler{request: func(_ context.Context, method string, _ json.RawMessage) (any, error) {
		return nil, MethodNotFound(method)
	}}, Options{})
	p.send(`{"jsonrpc":"2.0","id":5,"method":"$/cancel_request","params":{"requestId":4}}`)
	if f := p.recv(); f.id() != "5" || f.code(t) == 0 {
		t.Fatalf("got %v, want an error answer for id 5", f)
	}
}

func TestRequestsAreHandledOneAtATimeAndAnsweredInArrivalOrder(t *testing.T) {
	var inFlight, maxInFlight atomic.Int32
	var order []string
	h := &testHandler{request: func(_ context.Context, _ string, params json.RawMessage) (any, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		if n > maxInFlight.Load() {
			maxInFlight.Store(n)
		}
		var p struct{ N int }
		_ = json.Unmarshal(params, &p)
		time.Sleep(time.Duration(p.N%3) * time.Millisecond) // later ones are not slower
		order = append(order, fmt.Sprint(p.N))
		return p.N, nil
	}}
	p := startConn(t, h, Options{})
	const n = 40
	for i := range n {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m","params":{"n":%d}}`, i, i))
	}
	for i := range n {
		f := p.recv()
		if f.id() != fmt.Sprint(i) || string(f["result"]) != fmt.Sprint(i) {
			t.Fatalf("response %d: got %v", i, f)
		}
	}
	if m := maxInFlight.Load(); m != 1 {
		t.Errorf("%d requests were handled at once, want 1", m)
	}
	if got := strings.Join(order, ","); got != strings.Join(seq(n), ",") {
		t.Errorf("handled in order %s", got)
	}
}

func seq(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i)
	}
	return s
}

func TestDeferredRequestsRunConcurrently(t *testing.T) {
	// Each deferred handler waits until the other has started: run one
	// at a time they would deadlock.
	var wg sync.WaitGroup
	wg.Add(2)
	release := make(chan struct{})
	h := &testHandler{request: func(_ context.Context, method string, _ json.RawMessage) (any, error) {
		if method != "turn" {
			return method, nil
		}
		return Deferred(func() (any, error) {
			wg.Done()
			wg.Wait()
			<-release
			return "turn done", nil
		}), nil
	}}
	p := startConn(t, h, Options{})
	p.send(request("1", "turn"))
	p.send(request("2", "turn"))
	// Requests behind deferred ones are not held up by them.
	p.send(request("3", "ping"))
	if f := p.recv(); f.id() != "3" {
		t.Fatalf("got %v, want the ping answered while the turns run", f)
	}
	bothRunning := make(chan struct{})
	go func() { wg.Wait(); close(bothRunning) }()
	waitFor(t, bothRunning, "both deferred handlers to run at once")
	close(release)
	got := map[string]bool{}
	for range 2 {
		f := p.recv()
		if string(f["result"]) != `"turn done"` {
			t.Fatalf("got %v", f)
		}
		got[f.id()] = true
	}
	if !got["1"] || !got["2"] {
		t.Fatalf("answered ids %v, want 1 and 2", got)
	}
}

// callResult is Call's outcome, delivered from its goroutine.
type callResult struct {
	out map[string]any
	err error
}

func goCall(ctx context.Context, c *Conn, method string, params any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		var out map[string]any
		err := c.Call(ctx, method, params, &out)
		ch <- callResult{out, err}
	}()
	return ch
}

func TestCallRoundTrip(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	first := goCall(context.Background(), p.conn, "fs/read_text_file", ReadTextFileRequest{SessionID: "s", Path: "/a"})
	req1 := p.recv()
	second := goCall(context.Background(), p.conn, "terminal/create", CreateTerminalRequest{SessionID: "s", Command: "ls"})
	req2 := p.recv()

	if string(req1["method"]) != `"fs/read_text_file"` || string(req1["params"]) != `{"sessionId":"s","path":"/a"}` {
		t.Fatalf("outbound request: %v", req1)
	}
	if req1.id() == req2.id() {
		t.Fatalf("two calls share id %s", req1.id())
	}
	for _, r := range []frame{req1, req2} {
		var id int64
		if err := json.Unmarshal(r["id"], &id); err != nil {
			t.Fatalf("outbound id %s is not an integer", r["id"])
		}
	}
	// Answer out of order; each caller gets its own answer.
	p.send(`{"jsonrpc":"2.0","id":` + req2.id() + `,"error":{"code":-32601,"message":"Method not found"}}`)
	p.send(`{"jsonrpc":"2.0","id":` + req1.id() + `,"result":{"content":"hello\n"}}`)

	r1 := waitFor(t, first, "the first call")
	if r1.err != nil || r1.out["content"] != "hello\n" {
		t.Errorf("first call: %+v", r1)
	}
	r2 := waitFor(t, second, "the second call")
	var e *Error
	if !errors.As(r2.err, &e) || e.Code != CodeMethodNotFound {
		t.Errorf("second call: %+v, want *Error -32601", r2)
	}
}

func TestCancelledCallSendsCancelRequest(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	res := goCall(ctx, p.conn, "session/request_permission", map[string]string{"sessionId": "s"})
	req := p.recv()
	cancel()
	note := p.recv()
	if _, hasID := note["id"]; hasID || string(note["method"]) != `"$/cancel_request"` {
		t.Fatalf("got %v, want a $/cancel_request notification", note)
	}
	if want := `{"requestId":` + req.id() + `}`; string(note["params"]) != want {
		t.Fatalf("cancel params %s, want %s", note["params"], want)
	}
	if r := waitFor(t, res, "the call"); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Call returned %v, want context.Canceled", r.err)
	}
	// The peer's late answer to the withdrawn call is dropped silently.
	p.send(`{"jsonrpc":"2.0","id":` + req.id() + `,"result":{"outcome":{"outcome":"cancelled"}}}`)
	p.send(request("1", "ping"))
	if f := p.recv(); f.id() != "1" {
		t.Fatalf("got %v, want only the ping's answer", f)
	}
}

func TestResponsesToUnknownIDsAreIgnored(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	p.send(`{"jsonrpc":"2.0","id":42,"result":{}}`)
	p.send(`{"jsonrpc":"2.0","id":"nope","error":{"code":-32603,"message":"x"}}`)
	p.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	p.send(`{"jsonrpc":"2.0","id":43,"error":"not an object"}`)
	p.send(request("1", "ping"))
	if f := p.recv(); f.id() != "1" {
		t.Fatalf("got %v, want only the ping's answer", f)
	}
}

func TestEOFAnswersQueuedRequestsAndCancelsInFlightOnes(t *testing.T) {
	started := make(chan string, 4)
	h := slowHandler(started)
	inner := h.request
	h.request = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "queued" {
			return "queued done", nil
		}
		return inner(ctx, method, params)
	}
	p := startConn(t, h, Options{})
	call := goCall(context.Background(), p.conn, "fs/read_text_file", map[string]string{})
	p.recv() // the outbound request, never answered

	p.send(request("1", "slow"))
	waitFor(t, started, "the deferred handler")
	p.send(request("2", "blocking"))
	waitFor(t, started, "the blocking handler")
	p.send(request("3", "queued"))
	if err := p.closeInput(); err != nil {
		t.Fatalf("Serve after EOF: %v, want nil", err)
	}
	select {
	case <-p.conn.Gone():
	default:
		t.Error("Gone is open after EOF")
	}
	got := map[string]frame{}
	for _, f := range p.rest() {
		got[f.id()] = f
	}
	if len(got) != 3 {
		t.Fatalf("after EOF got answers %v, want ids 1, 2, 3", got)
	}
	for _, id := range []string{"1", "2"} {
		if c := got[id].code(t); c != CodeRequestCancelled {
			t.Errorf("in-flight id %s: got %v, want -32800", id, got[id])
		}
	}
	if string(got["3"]["result"]) != `"queued done"` {
		t.Errorf("queued id 3: got %v", got["3"])
	}
	if r := waitFor(t, call, "the pending call"); !errors.Is(r.err, ErrClosed) {
		t.Errorf("pending Call returned %v, want ErrClosed", r.err)
	}
}

// brokenWriter fails every write.
type brokenWriter struct{ writes atomic.Int32 }

func (w *brokenWriter) Write([]byte) (int, error) {
	w.writes.Add(1)
	return 0, errors.New("broken pipe")
}

func TestBrokenOutputClosesGoneAndServeReturns(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	w := &brokenWriter{}
	c := NewConn(inR, w, echoHandler(), Options{Logger: quietLogger()})
	done := make(chan error, 1)
	go func() { done <- c.Serve(context.Background(), 100*time.Millisecond) }()
	if _, err := io.WriteString(inW, request("1", "ping")+"\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c.Gone(), "Gone after the output broke")
	// The input is still open: Serve must not wait for it.
	waitFor(t, done, "Serve to return")
	if err := c.Notify("session/update", map[string]string{}); err == nil && w.writes.Load() > 1 {
		t.Errorf("the writer was used again after it broke")
	}
	if err := c.Call(context.Background(), "fs/read_text_file", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after the output broke: %v, want ErrClosed", err)
	}
}

func TestCancelledServeContextReturnsWhileInputIsOpen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := startConnContext(t, ctx, echoHandler(), Options{})
	p.send(request("1", "ping"))
	if f := p.recv(); f.id() != "1" {
		t.Fatalf("got %v", f)
	}
	cancel()
	if err := waitFor(t, p.done, "Serve to return"); !errors.Is(err, context.Canceled) {
		t.Errorf("Serve: %v, want context.Canceled", err)
	}
	p.done <- nil // for the cleanup
	// The reader still takes input (nothing else would drain it), but what
	// arrives after Serve returned is not answered.
	if _, err := io.WriteString(p.in, request("2", "ping")+"\n"); err != nil {
		t.Fatal(err)
	}
	if rest := p.rest(); len(rest) != 0 {
		t.Errorf("answered after Serve returned: %v", rest)
	}
}

func TestEveryOutputLineIsOneLineOfCompactJSON(t *testing.T) {
	tricky := "line1\nline2\r\n\ttab \u2028 ls \u2029 ps </script> & \x00 \x1f \"q\" \\ é 😀"
	pretty := json.RawMessage("{\n  \"a\": [1,\n 2],\n  \"b\": \"x\"\n}")
	h := &testHandler{request: func(_ context.Context, method string, _ json.RawMessage) (any, error) {
		switch method {
		case "raw":
			return pretty, nil
		case "raw-invalid-utf8":
			return json.RawMessage("{\"k\xff\":\"v\xc3\"}"), nil
		case "fail":
			return nil, NewError(-32001, tricky, tricky)
		}
		return map[string]any{"text": tricky}, nil
	}}
	p := startConn(t, h, Options{})
	if err := p.conn.Notify("session/update", SessionNotification{SessionID: "s",
		Update: ContentChunk{SessionUpdate: "agent_message_chunk", Content: TextBlock(tricky)}}); err != nil {
		t.Fatal(err)
	}
	p.send(request(`"a\nb"`, "text"))
	p.send(request("2", "raw"))
	p.send(request("3", "fail"))
	p.send(request("4", "raw-invalid-utf8"))
	// recv checks each line is newline-terminated, break-free and compact.
	note, text, raw, fail, rawBad := p.recv(), p.recv(), p.recv(), p.recv(), p.recv()
	if want := "{\"k\ufffd\":\"v\ufffd\"}"; string(rawBad["result"]) != want {
		t.Errorf("raw result with invalid UTF-8 sent as %q, want %q", rawBad["result"], want)
	}
	for _, f := range []frame{note, text, raw, fail} {
		s := f.String()
		if strings.ContainsAny(s, "\u2028\u2029") {
			t.Errorf("raw U+2028/U+2029 on the wire: %q", s)
		}
	}
	var n struct {
		Params struct {
			Update struct {
				Content struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(note.String()), &n); err != nil || n.Params.Update.Content.Text != tricky {
		t.Errorf("notification text did not round-trip: %q (%v)", n.Params.Update.Content.Text, err)
	}
	if text.id() != `"a\nb"` {
		t.Errorf("escaped id echoed as %s", text.id())
	}
	if string(raw["result"]) != `{"a":[1,2],"b":"x"}` {
		t.Errorf("raw result not compacted: %s", raw["result"])
	}
	var e Error
	if err := json.Unmarshal(fail["error"], &e); err != nil || e.Message != tricky {
		t.Errorf("error message did not round-trip: %q (%v)", e.Message, err)
	}
}

// A handler whose request the peer cancelled finds the $/cancel_request's
// params, _meta included, as its context's cause.
func TestCancelRequestParamsAreTheContextsCause(t *testing.T) {
	causes := make(chan error, 1)
	started := make(chan struct{}, 1)
	p := startConn(t, &testHandler{request: func(ctx context.Context, method string, _ json.RawMessage) (any, error) {
		return Deferred(func() (any, error) {
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		}), nil
	}}, Options{})
	p.send(request("3", "slow"))
	waitFor(t, started, "the deferred handler")
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3,"_meta":{"corvid.dev/answeredBy":{"name":"zed"}}}}`)
	if f := p.recv(); f.id() != "3" || f.code(t) != CodeRequestCancelled {
		t.Fatalf("got %v, want -32800", f)
	}
	var cr *CancelRequested
	if cause := waitFor(t, causes, "the cause"); !errors.As(cause, &cr) || !strings.Contains(string(cr.Params), `"corvid.dev/answeredBy":{"name":"zed"}`) {
		t.Fatalf("cause %v; want the $/cancel_request params", cause)
	}
}
