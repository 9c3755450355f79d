package serve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func dialWS(t *testing.T, url string, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), &websocket.DialOptions{HTTPHeader: hdr})
	if ws != nil {
		t.Cleanup(func() { ws.CloseNow() })
	}
	return ws, resp, err
}

func readFrame(t *testing.T, ws *websocket.Conn, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := ws.Read(ctx)
	if err != nil {
		t.Fatalf("read (want %s): %v", want, err)
	}
	if !strings.Contains(string(b), want) {
		t.Fatalf("got %s; want %s", b, want)
	}
	return string(b)
}

func TestWebSocketCarriesJSONRPCInTextFrames(t *testing.T) {
	_, url, _ := startServer(t, newFakeAgent(), Options{})
	ws, resp, err := dialWS(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Acp-Connection-Id") == "" {
		t.Fatalf("upgrade: %d, Acp-Connection-Id %q", resp.StatusCode, resp.Header.Get("Acp-Connection-Id"))
	}
	ctx := context.Background()
	_ = ws.Write(ctx, websocket.MessageText, []byte(initBody))
	readFrame(t, ws, `"protocolVersion":1`)
	_ = ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":`))
	readFrame(t, ws, `"code":-32700`)
	_ = ws.Write(ctx, websocket.MessageText, []byte(`[1,2]`))
	readFrame(t, ws, `JSON-RPC batches are not supported`)
	_ = ws.Write(ctx, websocket.MessageText, []byte(initBody))
	readFrame(t, ws, `Initialize not allowed on existing connection`)
	_ = ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{}}`))
	readFrame(t, ws, `"sessionId":"s1"`)
	readFrame(t, ws, `"method":"session/update"`) // every message on the one socket
}

func TestWebSocketWhoseFirstFrameIsNotInitializeIsClosed(t *testing.T) {
	_, url, _ := startServer(t, newFakeAgent(), Options{})
	ws, _, err := dialWS(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = ws.Write(context.Background(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"echo"}`))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err = ws.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusProtocolError {
		t.Fatalf("read: %v; want close 1002", err)
	}
}

func TestWebSocketUpgradeNeedsTokenAndOwnOrigin(t *testing.T) {
	_, url, _ := startServer(t, newFakeAgent(), Options{Token: "s3cret-token-0123456789"})
	if _, resp, err := dialWS(t, url, nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("no token: %v %v; want 401", err, resp)
	}
	hdr := http.Header{"Authorization": {"Bearer s3cret-token-0123456789"}, "Origin": {"http://evil.example"}}
	if _, resp, err := dialWS(t, url, hdr); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("foreign origin: %v %v; want 403", err, resp)
	}
	hdr.Del("Origin")
	if _, resp, err := dialWS(t, url, hdr); err != nil || resp.StatusCode != 101 {
		t.Errorf("with token: %v %v; want 101", err, resp)
	}
}

func TestOversizedWebSocketFrameClosesOnlyThatConnection(t *testing.T) {
	f := newFakeAgent()
	_, url, _ := startServer(t, f, Options{MaxBodyBytes: 4 << 10})
	ws, _, err := dialWS(t, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = ws.Write(ctx, websocket.MessageText, []byte(initBody))
	readFrame(t, ws, `"protocolVersion":1`)
	_ = ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"pad":"`+strings.Repeat("x", 8<<10)+`"}}`))
	select {
	case <-f.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("an oversized frame left the connection open")
	}
	// The daemon still serves others.
	connect(t, url)
}

func TestUnixSocketSpeaksNDJSONPerConnection(t *testing.T) {
	f := newFakeAgent()
	_, _, sock := startServer(t, f, Options{})
	a, as := dialUnix(t, sock)
	b, bs := dialUnix(t, sock)
	_, _ = a.Write([]byte(initBody + "\n"))
	_, _ = b.Write([]byte(`{"jsonrpc":"2.0","id":7,"method":"echo","params":{"who":"b"}}` + "\n"))
	if !as.Scan() || !strings.Contains(as.Text(), `"protocolVersion":1`) {
		t.Fatalf("a: %q", as.Text())
	}
	if !bs.Scan() || !strings.Contains(bs.Text(), `"who":"b"`) {
		t.Fatalf("b: %q", bs.Text())
	}
	a.Close()
	select {
	case <-f.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the socket did not end its handler's input")
	}
}
