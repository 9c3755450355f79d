package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// waitLimit bounds every wait in these tests; nothing here should take
// more than a few milliseconds, so hitting it means a hang.
const waitLimit = 5 * time.Second

// testHandler adapts functions to Handler. A nil function answers {} or
// ignores the notification.
type testHandler struct {
	request func(ctx context.Context, method string, params json.RawMessage) (any, error)
	notify  func(ctx context.Context, method string, params json.RawMessage)
}

func (h *testHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if h.request == nil {
		return nil, nil
	}
	return h.request(ctx, method, params)
}

func (h *testHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	if h.notify != nil {
		h.notify(ctx, method, params)
	}
}

// echoHandler answers every request with {"method": method}.
func echoHandler() *testHandler {
	return &testHandler{request: func(_ context.Context, method string, _ json.RawMessage) (any, error) {
		return map[string]string{"method": method}, nil
	}}
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// peer is the far end of a Conn under test: it writes the Conn's input and
// reads its output line by line.
type peer struct {
	t     *testing.T
	conn  *Conn
	in    *io.PipeWriter
	lines chan []byte
	done  chan error // Serve's result
}

func startConn(t *testing.T, h Handler, opts Options) *peer {
	t.Helper()
	return startConnContext(t, context.Background(), h, opts)
}

// startConnContext runs Serve with ctx.
func startConnContext(t *testing.T, ctx context.Context, h Handler, opts Options) *peer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	p := &peer{
		t:     t,
		conn:  NewConn(inR, outW, h, opts),
		in:    inW,
		lines: make(chan []byte, 1024),
		done:  make(chan error, 1),
	}
	go func() {
		defer close(p.lines)
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				p.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		p.done <- p.conn.Serve(ctx, time.Second)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-p.done:
		case <-time.After(waitLimit):
			t.Error("Serve did not return after the input closed")
		}
	})
	return p
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write %q: %v", line, err)
	}
}

// recv returns the next output line, checked to be one line of compact
// JSON, decoded by top-level member.
func (p *peer) recv() frame {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("output closed while a line was expected")
		}
		return parseFrame(p.t, line)
	case <-time.After(waitLimit):
		p.t.Fatal("no output line within the wait limit")
	}
	return nil
}

// closeInput ends the input and returns Serve's result.
func (p *peer) closeInput() error {
	p.t.Helper()
	p.in.Close()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		return err
	case <-time.After(waitLimit):
		p.t.Fatal("Serve did not return after the input closed")
	}
	return nil
}

// rest returns the output lines left after Serve returned.
func (p *peer) rest() []frame {
	p.t.Helper()
	var out []frame
	for line := range p.lines {
		out = append(out, parseFrame(p.t, line))
	}
	return out
}

// frame is one output message by top-level member.
type frame map[string]json.RawMessage

func parseFrame(t *testing.T, line []byte) frame {
	t.Helper()
	if !bytes.HasSuffix(line, []byte("\n")) {
		t.Fatalf("output line not newline-terminated: %q", line)
	}
	body := line[:len(line)-1]
	if bytes.ContainsAny(body, "\r\n") {
		t.Fatalf("output line has an embedded line break: %q", line)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		t.Fatalf("output line is not JSON: %v: %q", err, line)
	}
	if !bytes.Equal(compact.Bytes(), body) {
		t.Fatalf("output line is not compact JSON: %q", line)
	}
	var f frame
	if err := json.Unmarshal(body, &f); err != nil {
		t.Fatalf("output line is not a JSON object: %v: %q", err, line)
	}
	if string(f["jsonrpc"]) != `"2.0"` {
		t.Fatalf(`output line lacks "jsonrpc":"2.0": %q`, line)
	}
	return f
}

func (f frame) id() string { return string(f["id"]) }

// code returns the error code, or 0 for a result; it fails unless the frame
// is a response with exactly one of result and error.
func (f frame) code(t *testing.T) int {
	t.Helper()
	_, hasID := f["id"]
	_, hasRes := f["result"]
	rawErr, hasErr := f["error"]
	if !hasID || hasRes == hasErr {
		t.Fatalf("not a response with an id and exactly one of result/error: %v", f)
	}
	if !hasErr {
		return 0
	}
	var e struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(rawErr, &e); err != nil || e.Code == nil || e.Message == nil || *e.Message == "" {
		t.Fatalf("error without an integer code and a message: %s", rawErr)
	}
	return *e.Code
}

func (f frame) String() string {
	b, _ := json.Marshal(map[string]json.RawMessage(f))
	return string(b)
}

func request(id, method string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{}}`, id, method)
}

func TestResponseEchoesRequestIDExactly(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	ids := []string{`0`, `1`, `-7`, `9223372036854775807`, `-9223372036854775808`,
		`"abc"`, `""`, `"\u00e9\n"`, `"9"`, `null`}
	for _, id := range ids {
		p.send(request(id, "echo"))
		f := p.recv()
		if f.id() != id {
			t.Errorf("id %s echoed as %s", id, f.id())
		}
		if c := f.code(t); c != 0 {
			t.Errorf("id %s: error %d, want a result", id, c)
		}
		if string(f["result"]) != `{"method":"echo"}` {
			t.Errorf("id %s: result %s", id, f["result"])
		}
	}
}

func TestNotificationIsNeverAnswered(t *testing.T) {
	got := make(chan string, 4)
	h := echoHandler()
	h.notify = func(_ context.Context, method string, params json.RawMessage) {
		got <- method + " " + string(params)
		if method == "explode" {
			panic("notification handler fault")
		}
	}
	p := startConn(t, h, Options{})
	p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`)
	p.send(`{"jsonrpc":"2.0","method":"explode"}`)
	p.send(`{"jsonrpc":"2.0","method":"_ext/unknown","params":null}`)
	p.send(request("99", "sentinel"))
	if f := p.recv(); f.id() != "99" {
		t.Fatalf("first output answers a notification: %v", f)
	}
	want := []string{`session/cancel {"sessionId":"s"}`, `explode `, `_ext/unknown `}
	for _, w := range want {
		if g := <-got; g != w {
			t.Errorf("notification handled as %q, want %q", g, w)
		}
	}
}

func TestInvalidJSONIsParseErrorWithNullID(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":`,
		`not json`,
		`{"jsonrpc":"2.0","id":1,}`,
		`{"jsonrpc":"2.0","id":1,"method":"a"} trailing`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a", // a raw newline in a string
		"b\"}", // splits the frame in two
		"\x00",
	} {
		p.send(line)
		f := p.recv()
		if c := f.code(t); c != CodeParseError || f.id() != "null" {
			t.Errorf("%q: got %v, want -32700 with id null", line, f)
		}
	}
}

func TestNonObjectIsInvalidRequest(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	for _, line := range []string{
		`5`, `"session/new"`, `true`, `null`, `[]`,
		`[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}]`,
	} {
		p.send(line)
		f := p.recv()
		if c := f.code(t); c != CodeInvalidRequest || f.id() != "null" {
			t.Errorf("%s: got %v, want -32600 with id null", line, f)
		}
	}
	// A batch is refused as a whole: none of its members ran.
	p.send(request("3", "after"))
	if f := p.recv(); f.id() != "3" {
		t.Fatalf("a batch member was answered: %v", f)
	}
}

func TestMalformedEnvelopeIsInvalidRequest(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	cases := []struct{ line, id string }{
		{`{"id":3,"method":"echo"}`, "3"},
		{`{"jsonrpc":"1.0","id":4,"method":"echo"}`, "4"},
		{`{"jsonrpc":2.0,"id":5,"method":"echo"}`, "5"},
		{`{"jsonrpc":null,"id":"s","method":"echo"}`, `"s"`},
		{`{"jsonrpc":"2.0","id":6,"method":5}`, "6"},
		{`{"jsonrpc":"2.0","id":7,"method":["echo"]}`, "7"},
		{`{"jsonrpc":"2.0","id":8,"method":""}`, "8"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"echo"}`, "null"},
		{`{"jsonrpc":"2.0","id":9223372036854775808,"method":"echo"}`, "null"},
		{`{"jsonrpc":"2.0","id":{},"method":"echo"}`, "null"},
		{`{"jsonrpc":"2.0","id":true,"method":"echo"}`, "null"},
		{`{"jsonrpc":"2.0"}`, "null"},
		{`{"jsonrpc":"2.0","method":null}`, "null"},
		{`{}`, "null"},
		{`{"jsonrpc":"2.0","id":9,"result":{},"error":{"code":1,"message":"x"}}`, "null"},
	}
	for _, c := range cases {
		p.send(c.line)
		f := p.recv()
		if code := f.code(t); code != CodeInvalidRequest || f.id() != c.id {
			t.Errorf("%s: got %v, want -32600 with id %s", c.line, f, c.id)
		}
	}
}

func TestHandlerErrorsAreMappedAtTheBoundary(t *testing.T) {
	h := &testHandler{request: func(_ context.Context, method string, _ json.RawMessage) (any, error) {
		switch method {
		case "acp-error":
			return nil, fmt.Errorf("set option: %w", InvalidParams("Unknown value", "value x is not offered"))
		case "plain-error":
			return nil, errors.New("open /home/secret/.config: permission denied")
		case "panic":
			panic("secret panic text")
		case "deferred-panic":
			return Deferred(func() (any, error) { panic("secret deferred panic") }), nil
		case "deferred-error":
			return Deferred(func() (any, error) { return nil, ResourceNotFound("No such file", "/x") }), nil
		}
		return "ok", nil
	}}
	p := startConn(t, h, Options{})

	p.send(request("1", "acp-error"))
	f := p.recv()
	if f.code(t) != CodeInvalidParams || string(f["error"]) != `{"code":-32602,"message":"Unknown value","data":{"details":"value x is not offered"}}` {
		t.Errorf("wrapped *Error not passed through: %v", f)
	}
	for i, m := range []string{"plain-error", "panic", "deferred-panic"} {
		p.send(request(fmt.Sprint(i+2), m))
		f := p.recv()
		if f.code(t) != CodeInternalError {
			t.Errorf("%s: got %v, want -32603", m, f)
		}
		if s := f.String(); strings.Contains(s, "secret") || strings.Contains(s, "permission") {
			t.Errorf("%s: internal text leaked: %s", m, s)
		}
	}
	p.send(request("5", "deferred-error"))
	if f := p.recv(); f.code(t) != CodeResourceNotFound {
		t.Errorf("deferred *Error: got %v, want -32002", f)
	}
	// The connection survived the panics.
	p.send(request("6", "fine"))
	if f := p.recv(); f.id() != "6" || string(f["result"]) != `"ok"` {
		t.Errorf("after panics: got %v", f)
	}
}

func TestNilResultIsEmptyObject(t *testing.T) {
	p := startConn(t, &testHandler{}, Options{})
	p.send(request("1", "anything"))
	if f := p.recv(); string(f["result"]) != "{}" {
		t.Errorf("nil result sent as %s, want {}", f["result"])
	}
}

func TestBlankLinesAreIgnoredAndCRLFIsAccepted(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	p.send("")
	p.send("   \t")
	p.send("\r")
	p.send(request("1", "crlf") + "\r")
	p.send("  " + request("2", "padded") + "  ")
	for _, id := range []string{"1", "2"} {
		if f := p.recv(); f.id() != id || f.code(t) != 0 {
			t.Fatalf("got %v, want the result for id %s", f, id)
		}
	}
}

// padRequest returns a request line of exactly n bytes (without newline).
func padRequest(t *testing.T, id string, n int) string {
	t.Helper()
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"pad","params":{"p":"`, id)
	tail := `"}}`
	fill := n - len(head) - len(tail)
	if fill < 0 {
		t.Fatalf("cannot pad to %d bytes", n)
	}
	return head + strings.Repeat("x", fill) + tail
}

func TestOversizedLineIsOneInvalidRequest(t *testing.T) {
	const limit = 1024
	p := startConn(t, echoHandler(), Options{MaxLineBytes: limit})

	p.send(padRequest(t, "1", limit)) // exactly at the limit: accepted
	if f := p.recv(); f.id() != "1" || f.code(t) != 0 {
		t.Fatalf("a line of exactly MaxLineBytes: got %v, want a result", f)
	}
	p.send(padRequest(t, "2", limit) + "\r") // CRLF does not count
	if f := p.recv(); f.id() != "2" || f.code(t) != 0 {
		t.Fatalf("a CRLF line of exactly MaxLineBytes: got %v, want a result", f)
	}
	for _, n := range []int{limit + 1, 200 << 10} { // just over; over the read buffer
		p.send(padRequest(t, "3", n))
		f := p.recv()
		if f.code(t) != CodeInvalidRequest || f.id() != "null" {
			t.Fatalf("a line of %d bytes: got %v, want -32600 with id null", n, f)
		}
		p.send(request("4", "next"))
		if f := p.recv(); f.id() != "4" || f.code(t) != 0 {
			t.Fatalf("the line after a %d-byte line: got %v, want its result", n, f)
		}
	}
}

func TestOversizedFinalLineWithoutNewline(t *testing.T) {
	p := startConn(t, echoHandler(), Options{MaxLineBytes: 64})
	if _, err := io.WriteString(p.in, padRequest(t, "1", 500)); err != nil {
		t.Fatal(err)
	}
	if err := p.closeInput(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	rest := p.rest()
	if len(rest) != 1 || rest[0].code(t) != CodeInvalidRequest {
		t.Fatalf("got %v, want one -32600", rest)
	}
}

func TestFinalLineWithoutNewlineIsHandled(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	if _, err := io.WriteString(p.in, request("1", "last")); err != nil {
		t.Fatal(err)
	}
	if err := p.closeInput(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	rest := p.rest()
	if len(rest) != 1 || rest[0].id() != "1" || rest[0].code(t) != 0 {
		t.Fatalf("got %v, want the result for id 1", rest)
	}
}

func TestWholeNumberIdsAreAnsweredWithTheSameId(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	for _, id := range []string{"1e2", "1.0", "-3", "1E1"} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"echo"}`)
		if f := p.recv(); f.id() != id || f["result"] == nil {
			t.Errorf("id %s: got %v, want a result with id %s", id, f, id)
		}
	}
}

func TestBareCRSeparatesTwoFrames(t *testing.T) {
	p := startConn(t, echoHandler(), Options{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo"}` + "\r" + `{"jsonrpc":"2.0","id":2,"method":"echo"}`)
	for _, id := range []string{"1", "2"} {
		if f := p.recv(); f.id() != id || f["result"] == nil {
			t.Errorf("got %v, want a result for id %s", f, id)
		}
	}
	// A CR that is JSON whitespace keeps its frame whole.
	p.send("{\"jsonrpc\":\"2.0\",\r\"id\":3,\"method\":\"echo\"}")
	if f := p.recv(); f.id() != "3" || f["result"] == nil {
		t.Errorf("got %v, want a result for id 3", f)
	}
}

// A notification whose keep says no after BeforeWrite is dropped; the others
// and every response still go out, in order. keep is asked only after the
// barrier, when the store's fate of what the frame reports is known.
func TestNotifyIfDropsOnlyTheNotificationsKeepRefuses(t *testing.T) {
	var barrier atomic.Int32
	var askedAfterBarrier atomic.Bool
	p := startConn(t, echoHandler(), Options{BeforeWrite: func() error { barrier.Add(1); return nil }})
	keep := func(ok bool) func() bool {
		return func() bool {
			askedAfterBarrier.Store(barrier.Load() > 0)
			return ok
		}
	}
	for i, ok := range []bool{true, false, true} {
		if err := p.conn.NotifyIf("note", map[string]int{"n": i}, keep(ok)); err != nil {
			t.Fatal(err)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":7,"method":"m"}`)
	var got []string
	for len(got) < 3 {
		f := p.recv()
		switch {
		case f["method"] != nil:
			got = append(got, string(f["params"]))
		case f["id"] != nil:
			got = append(got, "response "+string(f["id"]))
		}
	}
	if want := []string{`{"n":0}`, `{"n":2}`, "response 7"}; !slices.Equal(got, want) {
		t.Errorf("frames %q, want %q", got, want)
	}
	if !askedAfterBarrier.Load() {
		t.Error("keep was asked before BeforeWrite ran")
	}
}
