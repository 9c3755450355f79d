package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Chunks frames a chunk file (one JSON event per line) as the event stream
// the API sent: "data: LINE" and a blank line per event, preceded by
// "event: TYPE" when named is true (Anthropic names each event by its
// JSON type; Gemini sends data lines only).
func Chunks(raw []byte, named bool) Response {
	var b bytes.Buffer
	for _, line := range Lines(raw) {
		if named {
			var ev struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(line, &ev)
			fmt.Fprintf(&b, "event: %s\n", ev.Type)
		}
		fmt.Fprintf(&b, "data: %s\n\n", line)
	}
	return Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: b.Bytes()}
}

// ChatChunks frames a chunk file as a Chat Completions server streams it:
// data lines only, ended by "data: [DONE]".
func ChatChunks(raw []byte) Response {
	r := Chunks(raw, false)
	r.Body = append(r.Body, "data: [DONE]\n\n"...)
	return r
}

// Lines returns the non-empty lines of a chunk file, without their line
// ends: the recorded events.
func Lines(chunks []byte) [][]byte {
	var out [][]byte
	for line := range bytes.Lines(chunks) {
		if l := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// Split cuts a chunk file holding several responses into one chunk file
// per response: a new one begins at each line containing marker (for the
// Responses API, `"type":"response.created"`).
func Split(chunks []byte, marker string) [][]byte {
	var out [][]byte
	for _, l := range Lines(chunks) {
		if bytes.Contains(l, []byte(marker)) || len(out) == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(append(out[len(out)-1], l...), '\n')
	}
	return out
}

// Events decodes every event of a chunk file.
func Events(t testing.TB, chunks []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range Lines(chunks) {
		var v map[string]any
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("chunk line %d: %v", i+1, err)
		}
		out = append(out, v)
	}
	return out
}

// JSONError is a recorded error body answered with status (and the given
// header lines, "Name: value").
func JSONError(status int, body []byte, header ...string) Response {
	h := http.Header{"Content-Type": {"application/json"}}
	for _, l := range header {
		k, v, _ := strings.Cut(l, ":")
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return Response{Status: status, Header: h, Body: body}
}

// CutAfter keeps the first n events of a framed event stream and appends
// tail (one more event, framed by the caller): a recorded stream that
// fails part way, as the API's documented in-stream error event does.
func CutAfter(r Response, n int, tail string) Response {
	events := bytes.SplitAfter(r.Body, []byte("\n\n"))
	if n > len(events) {
		n = len(events)
	}
	body := append(bytes.Join(events[:n], nil), tail...)
	return Response{Status: r.Status, Header: r.Header, Body: body}
}
