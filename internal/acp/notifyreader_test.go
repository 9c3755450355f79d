package acp

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// onReader says whether the caller runs on the connection's reading
// goroutine.
func onReader() bool { return strings.Contains(string(debug.Stack()), ").readLoop(") }

// With NotifyOnReader, a notification that nothing comes before is handled
// on the reading goroutine: no hand-off to the dispatcher per frame.
// Without it, the dispatcher handles every notification.
func TestNotifyOnReaderHandlesOnTheReader(t *testing.T) {
	for _, opt := range []bool{false, true} {
		where := make(chan bool, 10)
		h := &testHandler{notify: func(context.Context, string, json.RawMessage) { where <- onReader() }}
		p := startConn(t, h, Options{LendParams: true, NotifyOnReader: opt})
		for range 3 {
			p.send(`{"jsonrpc":"2.0","method":"note","params":{}}`)
			select {
			case got := <-where:
				if got != opt {
					t.Fatalf("NotifyOnReader %v: handled on the reader %v", opt, got)
				}
			case <-time.After(waitLimit):
				t.Fatalf("NotifyOnReader %v: notification never handled", opt)
			}
		}
	}
}

// NotifyOnReader keeps the order: a notification behind a request still
// being handled in order waits for it, on the dispatcher; one behind a
// request whose rest was deferred (a prompt's turn) does not wait for that
// rest. A response behind a notification is routed after it is handled.
func TestNotifyOnReaderKeepsTheOrder(t *testing.T) {
	release, finish := make(chan struct{}), make(chan struct{})
	events := make(chan string, 10)
	h := &testHandler{
		request: func(_ context.Context, method string, _ json.RawMessage) (any, error) {
			if method == "deferred" {
				return Deferred(func() (any, error) { <-finish; return nil, nil }), nil
			}
			<-release
			events <- "request done"
			return nil, nil
		},
		notify: func(_ context.Context, _ string, params json.RawMessage) {
			events <- string(params) + map[bool]string{true: " on reader", false: " on dispatcher"}[onReader()]
		},
	}
	p := startConn(t, h, Options{LendParams: true, NotifyOnReader: true})
	next := func() string {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-time.After(waitLimit):
			t.Fatal("nothing handled")
			return ""
		}
	}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	p.send(`{"jsonrpc":"2.0","method":"note","params":1}`)
	select {
	case e := <-events:
		t.Fatalf("%q before the request in front of it returned", e)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	for _, want := range []string{"request done", "1 on dispatcher"} {
		if got := next(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if f := p.recv(); string(f["id"]) != "1" {
		t.Fatalf("first answer %v, want id 1's", f)
	}

	p.send(`{"jsonrpc":"2.0","id":2,"method":"deferred"}`)
	p.send(`{"jsonrpc":"2.0","method":"note","params":2}`)
	if got := next(); got != "2 on reader" {
		t.Fatalf("behind a deferred request: got %q, want %q", got, "2 on reader")
	}
	close(finish)
	if f := p.recv(); string(f["id"]) != "2" {
		t.Fatalf("second answer %v, want id 2's", f)
	}
}
