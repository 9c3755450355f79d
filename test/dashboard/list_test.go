package dashboard

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// rpc is a minimal JSON-RPC client over serve's WebSocket, as the page is.
type rpc struct {
	t    *testing.T
	ws   *websocket.Conn
	next int
}

func dialRPC(t *testing.T, base string) *rpc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/acp", nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	c := &rpc{t: t, ws: ws}
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	return c
}

// call sends a request and returns its result, skipping notifications.
func (c *rpc) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.next++
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(data, &m)
		if m.Method != "" || m.ID == nil || *m.ID != c.next {
			continue
		}
		if m.Error != nil {
			c.t.Fatalf("%s: %s", method, m.Error)
		}
		return m.Result
	}
}

// The dashboard's list shows a held session's model and mode: session/list
// carries them in _meta (the stored-only sessions have none to give).
func TestSessionListCarriesModelAndModeOfHeldSessions(t *testing.T) {
	link := startDaemon(t, "")
	c := dialRPC(t, base(link))
	dir := t.TempDir()
	var created struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}), &created)
	var list struct {
		Sessions []struct {
			SessionID string         `json:"sessionId"`
			Meta      map[string]any `json:"_meta"`
		} `json:"sessions"`
	}
	_ = json.Unmarshal(c.call("session/list", map[string]any{}), &list)
	for _, s := range list.Sessions {
		if s.SessionID != created.SessionID {
			continue
		}
		model, _ := s.Meta["corvid.dev/model"].(string)
		if !strings.HasPrefix(model, "script:") || s.Meta["corvid.dev/mode"] != "default" {
			t.Fatalf("_meta %v: want corvid.dev/model script:… and corvid.dev/mode default", s.Meta)
		}
		return
	}
	t.Fatalf("session/list %+v has no %s", list, created.SessionID)
}
