package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestSSEReaderFollowsTheEventStreamFraming(t *testing.T) {
	body := ": keep-alive\n" +
		"event: message\ndata: {\"a\":\n" + // data split over two lines
		"data: 1}\r\n\r\n" +
		"id: 7\nretry: 10\n\n" + // an event without data dispatches nothing
		"data:{\"b\":2}\n\n" + // no space after the colon
		"data: {\"c\":3}" // the body ends inside an event
	r := NewReader(strings.NewReader(body))
	want := []struct {
		data     string
		complete bool
	}{{"{\"a\":\n1}", true}, {`{"b":2}`, true}, {`{"c":3}`, false}}
	for i, w := range want {
		data, complete, err := r.Next()
		if err != nil || string(data) != w.data || complete != w.complete {
			t.Fatalf("event %d = %q %v %v, want %q %v", i, data, complete, err, w.data, w.complete)
		}
	}
	if _, _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last event: %v", err)
	}
}

func TestSSEReaderRejectsALineThatIsNotSSE(t *testing.T) {
	r := NewReader(strings.NewReader("<html><body>Welcome</body></html>\n"))
	if data, _, err := r.Next(); !errors.Is(err, ErrNotSSE) || string(data) != "<html><body>Welcome</body></html>" {
		t.Fatalf("got %q %v", data, err)
	}
}

func TestSSEReaderReportsEventTypesAndTheLastEventID(t *testing.T) {
	body := "event: endpoint\ndata: /messages?s=1\n\n" +
		"id: 1\ndata: {\"a\":1}\n\n" + // no event field: a message
		"event: ignored\n\n" + // a type without data dispatches nothing, and does not linger
		"event: prime\nid: 2\n\n" + // an ID without data still becomes the last event ID
		"data: {\"b\":2}\n\n" +
		"id: bad\x00\nevent: message\ndata: {\"c\":3}\n\n" + // an id with NUL is ignored
		"id\ndata: {\"d\":4}\n\n" // an empty id resets it
	r := NewReader(strings.NewReader(body))
	want := []struct{ data, event, id string }{
		{"/messages?s=1", "endpoint", ""},
		{`{"a":1}`, "message", "1"},
		{`{"b":2}`, "message", "2"},
		{`{"c":3}`, "message", "2"},
		{`{"d":4}`, "message", ""},
	}
	for i, w := range want {
		data, complete, err := r.Next()
		if err != nil || !complete || string(data) != w.data || r.Event() != w.event || r.LastID() != w.id {
			t.Fatalf("event %d = %q %v %v, type %q, last id %q; want %q, type %q, last id %q",
				i, data, complete, err, r.Event(), r.LastID(), w.data, w.event, w.id)
		}
	}
	if _, _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last event: %v", err)
	}
}

func TestSSEReaderReportsTheReconnectionTime(t *testing.T) {
	r := NewReader(strings.NewReader("retry: 1500\ndata: a\n\nretry: soon\ndata: b\n\nretry: +7\ndata: c\n\nretry: 20\n\n"))
	for i, want := range []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond} {
		if _, _, err := r.Next(); err != nil || r.Retry() != want {
			t.Fatalf("event %d: retry %v (%v), want %v", i, r.Retry(), err, want)
		}
	}
	if _, _, err := r.Next(); !errors.Is(err, io.EOF) || r.Retry() != 20*time.Millisecond {
		t.Fatalf("at the end: retry %v (%v), want 20ms", r.Retry(), err)
	}
}

func TestSSEReaderCarriesTheLastEventIDOverAResumption(t *testing.T) {
	r := NewReader(strings.NewReader("data: a\n\nid: 9\ndata: b\n\n"))
	r.SetLastID("8")
	for i, want := range []string{"8", "9"} {
		if _, _, err := r.Next(); err != nil || r.LastID() != want {
			t.Fatalf("event %d: last id %q (%v), want %q", i, r.LastID(), err, want)
		}
	}
}
