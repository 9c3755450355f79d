package serve

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPostStatusCodesMatchTheReferenceServer(t *testing.T) {
	_, url, _ := startServer(t, newFakeAgent(), Options{MaxBodyBytes: 1 << 10})
	conn := connect(t, url)
	cases := []struct {
		name   string
		hdr    map[string]string
		ctype  string
		body   string
		status int
		want   string
	}{
		{"text/plain body", nil, "text/plain", initBody, 415, "Unsupported Media Type"},
		{"malformed JSON", nil, "", `{"jsonrpc":`, 400, "Invalid JSON"},
		{"batch", map[string]string{"Acp-Connection-Id": conn}, "", `[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, 400, `"code":-32600`},
		{"not an object", nil, "", `42`, 400, "Invalid JSON-RPC message"},
		{"missing connection id", nil, "", `{"jsonrpc":"2.0","id":2,"method":"echo"}`, 400, "Missing Acp-Connection-Id"},
		{"unknown connection id", map[string]string{"Acp-Connection-Id": "nope"}, "", `{"jsonrpc":"2.0","id":2,"method":"echo"}`, 404, "Unknown Acp-Connection-Id"},
		{"initialize on a connection", map[string]string{"Acp-Connection-Id": conn}, "", initBody, 400, "Initialize not allowed"},
		{"prompt without session header", map[string]string{"Acp-Connection-Id": conn}, "", `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1"}}`, 400, "Missing Acp-Session-Id"},
		{"mismatched session header", map[string]string{"Acp-Connection-Id": conn, "Acp-Session-Id": "s2"}, "", `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1"}}`, 400, "Mismatched Acp-Session-Id"},
		{"oversized body", nil, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2<<10) + `"}}`, 413, ""},
		{"accepted", map[string]string{"Acp-Connection-Id": conn}, "", `{"jsonrpc":"2.0","id":4,"method":"echo"}`, 202, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			for k, v := range c.hdr {
				hdr[k] = v
			}
			if c.ctype != "" {
				hdr["Content-Type"] = c.ctype
			}
			resp, body := post(t, url, hdr, c.body)
			if resp.StatusCode != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("got %d %q; want %d containing %q", resp.StatusCode, body, c.status, c.want)
			}
		})
	}
}

func TestGetAndDeleteStatusCodes(t *testing.T) {
	_, url, _ := startServer(t, newFakeAgent(), Options{})
	conn := connect(t, url)
	do := func(method string, hdr map[string]string) int {
		req, _ := http.NewRequest(method, url, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := do("GET", map[string]string{"Acp-Connection-Id": conn}); got != 406 {
		t.Errorf("GET without Accept: %d, want 406", got)
	}
	if got := do("GET", map[string]string{"Accept": "text/event-stream"}); got != 400 {
		t.Errorf("GET without connection: %d, want 400", got)
	}
	if got := do("GET", map[string]string{"Accept": "text/event-stream", "Acp-Connection-Id": "nope"}); got != 404 {
		t.Errorf("GET unknown connection: %d, want 404", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, first := sse(t, ctx, url, conn, "")
	if first.StatusCode != 200 {
		t.Fatalf("first receiver: %d", first.StatusCode)
	}
	_, second := sse(t, ctx, url, conn, "")
	if second.StatusCode != 409 {
		t.Errorf("second receiver: %d, want 409", second.StatusCode)
	}
	if got := do("PUT", nil); got != 405 {
		t.Errorf("PUT: %d, want 405", got)
	}
	if got := do("DELETE", nil); got != 400 {
		t.Errorf("DELETE without connection: %d, want 400", got)
	}
	if got := do("DELETE", map[string]string{"Acp-Connection-Id": conn}); got != 202 {
		t.Errorf("DELETE: %d, want 202", got)
	}
	if got := do("DELETE", map[string]string{"Acp-Connection-Id": conn}); got != 404 {
		t.Errorf("DELETE again: %d, want 404", got)
	}
}

func TestResponsesAndUpdatesRouteToTheirStreams(t *testing.T) {
	f := newFakeAgent()
	_, url, _ := startServer(t, f, Options{})
	conn := connect(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	main, _ := sse(t, ctx, url, conn, "")
	hdr := map[string]string{"Acp-Connection-Id": conn}
	if resp, _ := post(t, url, hdr, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}`); resp.StatusCode != 202 {
		t.Fatalf("session/new: %d", resp.StatusCode)
	}
	recv(t, main, `"sessionId":"s1"`) // the answer, on the connection stream
	// The update was queued for s1 before anyone listened; it waits.
	sess, _ := sse(t, ctx, url, conn, "s1")
	recv(t, sess, `"method":"session/update"`)
	hdr["Acp-Session-Id"] = "s1"
	post(t, url, hdr, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1"}}`)
	recv(t, sess, `"method":"session/update"`)
	recv(t, sess, `"id":3`) // a session request's answer is the session's
	post(t, url, hdr, `{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"s1"}}`)
	recv(t, sess, `"method":"session/update"`)
	recv(t, main, `"id":4`) // session/load's answer is the connection's, as in the SDK
}

func TestTooMuchUnreadOutputClosesTheConnectionNotTheHandlerFirst(t *testing.T) {
	f := newFakeAgent()
	_, url, _ := startServer(t, f, Options{MaxBufferedBytes: 64 << 10})
	conn := connect(t, url)
	hdr := map[string]string{"Acp-Connection-Id": conn}
	// Nobody reads the connection stream: 100 × 4 KiB cannot wait.
	post(t, url, hdr, `{"jsonrpc":"2.0","id":2,"method":"flood","params":{"N":100,"Size":4096}}`)
	select {
	case <-f.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's input did not end after the limit")
	}
	if resp, _ := post(t, url, hdr, `{"jsonrpc":"2.0","id":3,"method":"echo"}`); resp.StatusCode != 404 {
		t.Fatalf("after the limit: %d, want 404 (connection closed)", resp.StatusCode)
	}
}

func TestStalledReceiverClosesTheConnection(t *testing.T) {
	f := newFakeAgent()
	_, url, sock := startServer(t, f, Options{MaxOutputStall: 200 * time.Millisecond})
	c, _ := dialUnix(t, sock)
	// Never read: the socket's buffers fill, the pump blocks in a write,
	// and the queue behind it stops moving.
	_, _ = c.Write([]byte(initBody + "\n" + `{"jsonrpc":"2.0","id":2,"method":"flood","params":{"N":400,"Size":65536}}` + "\n"))
	select {
	case <-f.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("a client that reads nothing kept its connection")
	}
	_ = url
}

func TestTokenAndOriginAreChecked(t *testing.T) {
	_, url, _ := startServer(t, newFakeAgent(), Options{Token: "s3cret-token-0123456789"})
	self := strings.TrimSuffix(url, "/acp")
	cases := []struct {
		hdr    map[string]string
		status int
	}{
		{map[string]string{}, 401},
		{map[string]string{"Authorization": "Bearer wrong"}, 401},
		{map[string]string{"Authorization": "s3cret-token-0123456789"}, 401},
		{map[string]string{"Authorization": "Bearer s3cret-token-0123456789", "Origin": "http://evil.example"}, 403},
		{map[string]string{"Authorization": "Bearer s3cret-token-0123456789", "Origin": self}, 200},
		{map[string]string{"Authorization": "Bearer s3cret-token-0123456789"}, 200},
	}
	for _, c := range cases {
		resp, body := post(t, url, c.hdr, initBody)
		if resp.StatusCode != c.status {
			t.Errorf("%v: %d %s, want %d", c.hdr, resp.StatusCode, body, c.status)
		}
	}
}

func TestOriginOfTheLoopbackListenerUnderAnotherLoopbackNameIsAccepted(t *testing.T) {
	_, url, _ := startServer(t, newFakeAgent(), Options{})
	port := url[strings.LastIndexByte(url, ':'):strings.LastIndexByte(url, '/')]
	for origin, want := range map[string]int{
		"http://localhost" + port:       200,
		"http://127.0.0.1" + port:       200,
		"http://localhost:1":            403,
		"http://rebound.example" + port: 403,
		"null":                          403,
	} {
		if resp, _ := post(t, url, map[string]string{"Origin": origin}, initBody); resp.StatusCode != want {
			t.Errorf("Origin %s: %d, want %d", origin, resp.StatusCode, want)
		}
	}
}

func TestHTTP2WithPriorKnowledgeIsServed(t *testing.T) {
	_, url, _ := startServer(t, newFakeAgent(), Options{})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &p}}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 || resp.Header.Get("Acp-Connection-Id") == "" {
		t.Fatalf("h2c initialize: %s %d %q", resp.Proto, resp.StatusCode, resp.Header.Get("Acp-Connection-Id"))
	}
}

func TestHTTPConnectionThatNobodyUsesIsClosedAfterTheIdleTimeout(t *testing.T) {
	_, url, _ := startServer(t, newFakeAgent(), Options{IdleTimeout: 200 * time.Millisecond})
	gone := connect(t, url)
	held := connect(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, resp := sse(t, ctx, url, held, ""); resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	time.Sleep(600 * time.Millisecond)
	echo := `{"jsonrpc":"2.0","id":9,"method":"echo"}`
	if resp, _ := post(t, url, map[string]string{"Acp-Connection-Id": gone}, echo); resp.StatusCode != 404 {
		t.Errorf("a connection idle past the timeout: %d, want 404", resp.StatusCode)
	}
	if resp, _ := post(t, url, map[string]string{"Acp-Connection-Id": held}, echo); resp.StatusCode != 202 {
		t.Errorf("a connection whose client holds a stream: %d, want 202", resp.StatusCode)
	}
}
