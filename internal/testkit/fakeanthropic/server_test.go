package fakeanthropic

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

type sseEvent struct {
	name string
	data map[string]any
}

func post(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", "sk-test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readEvents parses an SSE body until it ends, returning what it read and
// the read error that ended it (nil at a clean end).
func readEvents(r io.Reader) ([]sseEvent, error) {
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data)
		}
	}
	return evs, sc.Err()
}

func names(evs []sseEvent) string {
	var ns []string
	for _, e := range evs {
		n := e.name
		if d, ok := e.data["delta"].(map[string]any); ok && e.name == "content_block_delta" {
			n = d["type"].(string)
		}
		ns = append(ns, n)
	}
	return strings.Join(ns, " ")
}

const streamBody = `{"model":"claude-test","max_tokens":100,"stream":true,"system":"be brief","messages":[{"role":"user","content":"hi"}]}`

func TestStreamsScriptedBlocksInWireOrder(t *testing.T) {
	s := New(t)
	s.Enqueue(Response{
		Blocks: []Block{Thinking("hmm", "sig1"), Text("Hello!"), ToolUse("toolu_1", "read", `{"path":"a.go"}`)},
		Usage:  Usage{InputTokens: 10, OutputTokens: 5},
	})
	resp := post(t, s, streamBody)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content-type = %q", ct)
	}
	evs, err := readEvents(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := "message_start ping " +
		"content_block_start thinking_delta signature_delta content_block_stop " +
		"content_block_start text_delta content_block_stop " +
		"content_block_start input_json_delta input_json_delta input_json_delta content_block_stop " +
		"message_delta message_stop"
	if got := names(evs); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	md := evs[len(evs)-2].data
	if md["delta"].(map[string]any)["stop_reason"] != "tool_use" {
		t.Errorf("message_delta = %v, want stop_reason tool_use by default", md)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].APIKey() != "sk-test" || reqs[0].SystemText() != "be brief" ||
		reqs[0].Body.Messages[0].Content[0].Text != "hi" {
		t.Fatalf("recorded %+v", reqs)
	}
}

func TestHTTPFaultCarriesRetryAfterAndErrorBody(t *testing.T) {
	s := New(t)
	s.Enqueue(Response{Fault: RateLimit(1500 * time.Millisecond)})
	resp := post(t, s, streamBody)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("status %d retry-after %q, want 429 and 2", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	var body struct {
		Error struct{ Type, Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Error.Type != "rate_limit_error" {
		t.Fatalf("body %+v, %v", body, err)
	}
}

func TestStreamErrorEndsStreamWithErrorEvent(t *testing.T) {
	s := New(t)
	s.Enqueue(Response{Blocks: []Block{Text("abcdefghijklmnop")}, Fault: StreamError(3, "overloaded_error", "Overloaded")})
	evs, err := readEvents(post(t, s, streamBody).Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(evs); got != "message_start ping content_block_start text_delta error" {
		t.Fatalf("events = %s", got)
	}
}

func TestCutClosesConnectionMidBlock(t *testing.T) {
	s := New(t)
	s.Enqueue(Response{Blocks: []Block{Text("abcdefghijklmnop")}, Fault: Cut(3)})
	evs, err := readEvents(post(t, s, streamBody).Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read error = %v, want unexpected EOF", err)
	}
	if got := names(evs); got != "message_start ping content_block_start text_delta" {
		t.Fatalf("events = %s", got)
	}
}

func TestStallHoldsTheStream(t *testing.T) {
	s := New(t)
	s.Enqueue(Response{Blocks: []Block{Text("hi")}, Fault: Stall(1, 200*time.Millisecond)})
	start := time.Now()
	evs, err := readEvents(post(t, s, streamBody).Body)
	if err != nil || len(evs) == 0 {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("stream took %v, want the 200ms stall", d)
	}
}

func TestCloseEndsAStalledResponse(t *testing.T) {
	s := New(t)
	s.Enqueue(Response{Fault: Stall(0, time.Hour)})
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Close()
	}()
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(streamBody))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
}

func TestRequireAPIKeyRejectsOtherKeysWithoutTakingResponse(t *testing.T) {
	s := New(t)
	s.RequireAPIKey("sk-other")
	s.Enqueue(Response{Blocks: []Block{Text("hi")}})
	if resp := post(t, s, streamBody); resp.StatusCode != 401 {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	if s.Pending() != 1 {
		t.Fatalf("pending %d, want the response still queued", s.Pending())
	}
}

func TestNonStreamingRequestGetsWholeMessage(t *testing.T) {
	s := New(t)
	s.Enqueue(Response{Blocks: []Block{Text("hi")}})
	resp := post(t, s, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`)
	var msg struct {
		Content    []ContentBlock
		StopReason string `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || msg.Content[0].Text != "hi" || msg.StopReason != "end_turn" {
		t.Fatalf("message %+v, %v", msg, err)
	}
}

func TestPiecesNeverSplitARune(t *testing.T) {
	got := pieces("héllo wörld", 2)
	if strings.Join(got, "") != "héllo wörld" {
		t.Fatalf("pieces lost text: %q", got)
	}
	for _, p := range got {
		if !json.Valid([]byte(`"`+p+`"`)) || strings.ContainsRune(p, '\uFFFD') {
			t.Fatalf("piece %q is not whole runes", p)
		}
	}
}
