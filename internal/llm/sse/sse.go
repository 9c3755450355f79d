// Package sse reads text/event-stream bodies, the streaming format every
// provider API uses.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// MaxEventBytes bounds one SSE line. Chunks are small, but one can carry a
// whole function call or an inline image.
const MaxEventBytes = 64 << 20

// ErrNotSSE reports a line that is neither an SSE field nor a comment:
// the base URL answered with something other than an event stream.
var ErrNotSSE = errors.New("not an SSE line")

// Reader splits a text/event-stream body into the data of its events.
// Lines may end in "\n" or "\r\n"; multi-line data joins with "\n"; the
// comments are ignored. The provider APIs need only the data; MCP also
// reads the event type (Event), the last event ID (LastID), which it sends
// back as Last-Event-ID when it reconnects, and the reconnection time the
// server asks for (Retry).
type Reader struct {
	sc     *bufio.Scanner
	data   []byte
	has    bool   // a data field was seen since the last dispatch
	typ    string // the event field of the event being read
	event  string // the type of the event Next returned last
	lastID string
	retry  time.Duration
}

func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 16<<10), MaxEventBytes)
	return &Reader{sc: sc}
}

// Next returns the data of the next event. At the end of the body it
// returns the data of an event left without its blank line (complete is
// false), then io.EOF; a failed read returns that read's error, and a line
// that is not SSE returns ErrNotSSE with the line as data.
func (r *Reader) Next() (data []byte, complete bool, err error) {
	for r.sc.Scan() {
		line := bytes.TrimSuffix(r.sc.Bytes(), []byte("\r"))
		if len(line) == 0 {
			if r.has {
				return r.take(), true, nil
			}
			r.typ = ""
			continue
		}
		if line[0] == ':' {
			continue // comment
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			if r.has {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			r.has = true
		case "event":
			r.typ = string(value)
		case "id":
			// An id holding NUL is ignored (the WHATWG rule); an empty id
			// resets the last event ID.
			if bytes.IndexByte(value, 0) < 0 {
				r.lastID = string(value)
			}
		case "retry":
			// Only ASCII digits count (the WHATWG rule).
			if ms, err := strconv.ParseUint(string(value), 10, 32); err == nil && value[0] != '+' {
				r.retry = time.Duration(ms) * time.Millisecond
			}
		default:
			return append([]byte(nil), line...), false, ErrNotSSE
		}
	}
	if err := r.sc.Err(); err != nil {
		return nil, false, err
	}
	if r.has {
		return r.take(), false, nil
	}
	return nil, false, io.EOF
}

func (r *Reader) take() []byte {
	d := r.data
	r.event = r.typ
	if r.event == "" {
		r.event = "message"
	}
	r.data, r.has, r.typ = nil, false, ""
	return d
}

// Event returns the type of the event Next returned last: its event field,
// or "message" when it had none.
func (r *Reader) Event() string { return r.event }

// SetLastID seeds the last event ID for a stream that resumes another:
// like a reconnecting EventSource, the ID carries over until an id field
// changes it.
func (r *Reader) SetLastID(id string) { r.lastID = id }

// LastID returns the last event ID: the value of the latest id field read
// so far, whether or not its event carried data (a stream may announce
// an ID in an event without data just so it can be resumed).
func (r *Reader) LastID() string { return r.lastID }

// Retry returns the reconnection time of the latest valid retry field, or
// 0 if the stream named none.
func (r *Reader) Retry() time.Duration { return r.retry }
