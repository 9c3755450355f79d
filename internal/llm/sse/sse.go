// Package sse reads text/event-stream bodies, the streaming format every
// provider API uses.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// MaxEventBytes bounds one SSE line. Chunks are small, but one can carry a
// whole function call or an inline image.
const MaxEventBytes = 64 << 20

// ErrNotSSE reports a line that is neither an SSE field nor a comment:
// the base URL answered with something other than an event stream.
var ErrNotSSE = errors.New("not an SSE line")

// Reader splits a text/event-stream body into the data of its events.
// Lines may end in "\n" or "\r\n"; multi-line data joins with "\n"; the
// event, id and retry fields and comments are ignored.
type Reader struct {
	sc   *bufio.Scanner
	data []byte
	has  bool // a data field was seen since the last dispatch
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
		case "event", "id", "retry":
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
	r.data, r.has = nil, false
	return d
}
