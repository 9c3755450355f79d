package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzSeeds are inputs for both fuzzers; testdata/fuzz holds more.
var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi\n"}]}}`,
	`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
	`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`,
	`{"jsonrpc":"2.0","id":0,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"a"}]`,
	`{"jsonrpc":"2.0","id":1.5,"method":"a"}`,
	`{"id":1,"method":"a"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"a\"}", // invalid UTF-8 in the id
	"\r\n\n  \n",
	`{"jsonrpc":"2.0","id":9223372036854775807,"method":"a","params":null}`,
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, rpcErr := decodeMessage(line)
		if rpcErr != nil {
			if rpcErr.Code != CodeParseError && rpcErr.Code != CodeInvalidRequest {
				t.Fatalf("envelope error code %d", rpcErr.Code)
			}
			if msg != nil && msg.hasID && !validID(msg.ID) {
				t.Fatalf("error would echo invalid id %q", msg.ID)
			}
			return
		}
		if msg == nil {
			t.Fatal("no message and no error")
		}
		if msg.hasID && (!validID(msg.ID) || !utf8.Valid(msg.ID)) {
			t.Fatalf("accepted id %q", msg.ID)
		}
		if msg.Method == "" {
			if !msg.hasID || (msg.Result == nil) == (msg.Error == nil) {
				t.Fatalf("accepted a response without an id or with both/neither of result and error: %+v", msg)
			}
			return
		}
		// Cross-check against a plain decode of the same line.
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(line, &fields); err != nil {
			t.Fatalf("accepted a line encoding/json rejects: %v", err)
		}
		var method string
		if json.Unmarshal(fields["method"], &method) != nil || method != msg.Method {
			t.Fatalf("method %q, plain decode says %q", msg.Method, method)
		}
		if id, ok := fields["id"]; ok != msg.hasID || (ok && utf8.Valid(id) && !bytes.Equal(id, msg.ID)) {
			t.Fatalf("id %q, plain decode says %q", msg.ID, id)
		}
		// A request re-encoded the way Conn sends one decodes to itself.
		env := &wireMessage{JSONRPC: "2.0", ID: msg.ID, hasID: msg.hasID, Method: msg.Method}
		var payload any
		if msg.Params != nil {
			payload = msg.Params
		}
		frame, err := encodeFrame(env, payload)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if bytes.Count(frame, []byte("\n")) != 1 || frame[len(frame)-1] != '\n' {
			t.Fatalf("re-encoded frame is not one line: %q", frame)
		}
		back, rpcErr := decodeMessage(frame)
		if rpcErr != nil {
			t.Fatalf("re-encoded %q fails to decode: %v", frame, rpcErr)
		}
		if back.Method != msg.Method || back.hasID != msg.hasID || !bytes.Equal(back.ID, msg.ID) {
			t.Fatalf("round trip changed the envelope: %q → %q", line, frame)
		}
		var compact bytes.Buffer
		if msg.Params != nil {
			_ = json.Compact(&compact, msg.Params)
		}
		want := bytes.ToValidUTF8(compact.Bytes(), []byte("\uFFFD")) // frames are UTF-8
		if !bytes.Equal(back.Params, want) && !(back.Params == nil && len(want) == 0) {
			t.Fatalf("round trip changed params: %q → %q", want, back.Params)
		}
	})
}

// fuzzHandler exercises every path of the dispatcher: plain results,
// Deferred ones, handler errors and panics, and work that waits for
// cancellation.
var fuzzHandler = &testHandler{
	request: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "defer":
			return Deferred(func() (any, error) { return params, nil }), nil
		case "wait":
			return Deferred(func() (any, error) { <-ctx.Done(); return nil, ctx.Err() }), nil
		case "error":
			return nil, errors.New("internal detail")
		case "panic":
			panic("fuzz panic")
		}
		return params, nil
	},
	notify: func(context.Context, string, json.RawMessage) {},
}

// lockedBuffer is written by the Conn's writer and read after Serve.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

func FuzzConn(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s + "\n"))
	}
	f.Add([]byte(request("1", "defer") + "\n" + request("2", "wait") + "\n" +
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}` + "\n" + request("3", "panic")))
	f.Fuzz(func(t *testing.T, input []byte) {
		var out lockedBuffer
		c := NewConn(bytes.NewReader(input), &out, fuzzHandler, Options{MaxLineBytes: 256, Logger: quietLogger()})
		done := make(chan error, 1)
		go func() { done <- c.Serve(context.Background(), time.Second) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Serve on a byte stream: %v, want nil at EOF", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return at EOF")
		}
		lines := bytes.SplitAfter(out.Bytes(), []byte("\n"))
		if last := lines[len(lines)-1]; len(last) != 0 {
			t.Fatalf("output ends without a newline: %q", last)
		}
		lines = lines[:len(lines)-1]
		// A line ends at LF, CRLF or a bare CR: a bare CR separates two
		// frames (it never joins them).
		inputLines := 0
		for _, l := range bytes.FieldsFunc(input, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if len(bytes.TrimSpace(l)) > 0 {
				inputLines++
			}
		}
		if len(lines) > inputLines {
			t.Fatalf("%d output lines for %d input lines", len(lines), inputLines)
		}
		for _, line := range lines {
			checkResponseLine(t, line)
		}
	})
}

// checkResponseLine fails unless line is one valid JSON-RPC response.
func checkResponseLine(t *testing.T, line []byte) {
	t.Helper()
	body := bytes.TrimSuffix(line, []byte("\n"))
	if !utf8.Valid(body) || !json.Valid(body) || bytes.ContainsAny(body, "\r\n") {
		t.Fatalf("output line is not one line of UTF-8 JSON: %q", line)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(body, &f); err != nil {
		t.Fatalf("output line is not an object: %q", line)
	}
	id, hasID := f["id"]
	_, hasRes := f["result"]
	rawErr, hasErr := f["error"]
	_, hasMethod := f["method"]
	if string(f["jsonrpc"]) != `"2.0"` || !hasID || !validID(id) || hasMethod || hasRes == hasErr {
		t.Fatalf("output line is not a JSON-RPC response: %q", line)
	}
	if hasErr {
		var e struct {
			Code    *int32  `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(rawErr, &e) != nil || e.Code == nil || e.Message == nil {
			t.Fatalf("malformed error object: %q", line)
		}
	}
}
