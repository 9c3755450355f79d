package replay

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServerFramesChunksAndKeepsRequests drives the server with a plain
// HTTP client: a chunk file goes out as SSE data events (named ones for
// Chunks(raw, true), [DONE] last for ChatChunks), an error body with its
// status and headers, and every request is kept in order with its body.
func TestServerFramesChunksAndKeepsRequests(t *testing.T) {
	raw := []byte("{\"type\":\"a\",\"n\":1}\r\n\n  \n{\"type\":\"b\"}\n")
	s := New(t, ChatChunks(raw), Chunks(raw, true), JSONError(429, []byte(`{"error":{}}`), "retry-after: 1"))
	type answer struct {
		status int
		header http.Header
		body   string
	}
	var got []answer
	for i := range 3 {
		resp, err := http.Post(s.URL+"/v1/x", "application/json", strings.NewReader(fmt.Sprintf(`{"i":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, answer{resp.StatusCode, resp.Header, string(b)})
	}
	if want := "data: {\"type\":\"a\",\"n\":1}\n\ndata: {\"type\":\"b\"}\n\ndata: [DONE]\n\n"; got[0].body != want || got[0].header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("ChatChunks served %q (%s), want %q", got[0].body, got[0].header.Get("Content-Type"), want)
	}
	if want := "event: a\ndata: {\"type\":\"a\",\"n\":1}\n\nevent: b\ndata: {\"type\":\"b\"}\n\n"; got[1].body != want {
		t.Errorf("named Chunks served %q, want %q", got[1].body, want)
	}
	if got[2].status != 429 || got[2].header.Get("Retry-After") != "1" || got[2].header.Get("Content-Type") != "application/json" || got[2].body != `{"error":{}}` {
		t.Errorf("JSONError served %+v", got[2])
	}
	reqs := s.MustRequests(t, 3)
	for i, r := range reqs {
		if r.Method != "POST" || r.Path != "/v1/x" || r.JSON(t)["i"] != float64(i) || r.At.IsZero() || i > 0 && r.At.Before(reqs[i-1].At) {
			t.Errorf("request %d kept as %+v", i, r)
		}
	}
}

// TestSplitCutsAChunkFileAtEachMarker: Split starts a new response at each
// line holding the marker, keeping every line's bytes.
func TestSplitCutsAChunkFileAtEachMarker(t *testing.T) {
	raw := []byte("{\"type\":\"start\",\"x\":1}\n{\"type\":\"delta\"}\n\n{\"type\":\"start\",\"x\":2}\r\n{\"type\":\"end\"}")
	parts := Split(raw, `"type":"start"`)
	want := []string{"{\"type\":\"start\",\"x\":1}\n{\"type\":\"delta\"}\n", "{\"type\":\"start\",\"x\":2}\n{\"type\":\"end\"}\n"}
	if len(parts) != len(want) {
		t.Fatalf("Split gave %d parts, want %d: %q", len(parts), len(want), parts)
	}
	for i := range want {
		if !bytes.Equal(parts[i], []byte(want[i])) {
			t.Errorf("part %d %q, want %q", i, parts[i], want[i])
		}
	}
}
