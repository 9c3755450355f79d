package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
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
