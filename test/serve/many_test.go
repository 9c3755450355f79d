package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestManyClientsAtOnceKeepTheirStreamsApart: 20 WebSocket clients and 10
// socket clients each open a session and prompt at the same time; each
// gets its own whole answer and nothing of another session.
func TestManyClientsAtOnceKeepTheirStreamsApart(t *testing.T) {
	dir := t.TempDir()
	answer := strings.Repeat("streamed words ", 40) + "END"
	script := writeScript(t, dir, map[string]any{"chunkSize": 16, "responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": answer}}},
	}})
	d := startDaemon(t, 2, "-m", "script:"+script, "--yolo", "--listen", "127.0.0.1:0", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for i := range 20 {
		wg.Go(func() {
			if err := wsTurn(ctx, d.url, dir, answer); err != nil {
				errs <- fmt.Errorf("websocket client %d: %w", i, err)
			}
		})
	}
	for i := range 10 {
		wg.Go(func() {
			if err := socketTurn(ctx, d.sock, dir, answer); err != nil {
				errs <- fmt.Errorf("socket client %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// wsTurn runs one turn over a WebSocket (see turn).
func wsTurn(ctx context.Context, url, cwd, want string) error {
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 24)
	return turn(cwd, want,
		func(b []byte) error { return ws.Write(ctx, websocket.MessageText, b) },
		func() ([]byte, error) { _, b, err := ws.Read(ctx); return b, err })
}

// socketTurn runs one turn over the unix socket (see turn).
func socketTurn(ctx context.Context, sock, cwd, want string) error {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(nil, 1<<24)
	return turn(cwd, want,
		func(b []byte) error { _, err := c.Write(append(b, '\n')); return err },
		func() ([]byte, error) {
			if !sc.Scan() {
				return nil, fmt.Errorf("connection ended: %v", sc.Err())
			}
			return sc.Bytes(), nil
		})
}

// turn runs initialize, session/new and one prompt, and checks the
// streamed text and that every update is its own session's.
func turn(cwd, want string, write func([]byte) error, read func() ([]byte, error)) error {
	send := func(id int, method string, params any) error {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		return write(b)
	}
	if err := send(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		return err
	}
	if err := send(2, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}); err != nil {
		return err
	}
	var sid string
	var text strings.Builder
	for {
		b, err := read()
		if err != nil {
			return err
		}
		var m struct {
			ID     *int `json:"id"`
			Result struct {
				SessionID  string `json:"sessionId"`
				StopReason string `json:"stopReason"`
			} `json:"result"`
			Params struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					SessionUpdate string `json:"sessionUpdate"`
					Content       struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		switch {
		case m.ID != nil && *m.ID == 2:
			sid = m.Result.SessionID
			if err := send(3, "session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("hi")}); err != nil {
				return err
			}
		case m.ID != nil && *m.ID == 3:
			if m.Result.StopReason != "end_turn" || text.String() != want {
				return fmt.Errorf("ended %q with %q", m.Result.StopReason, text.String())
			}
			return nil
		case m.Params.SessionID != "" && m.Params.SessionID != sid:
			return fmt.Errorf("an update of session %s on %s's connection", m.Params.SessionID, sid)
		case m.Params.Update.SessionUpdate == "agent_message_chunk":
			text.WriteString(m.Params.Update.Content.Text)
		}
	}
}
