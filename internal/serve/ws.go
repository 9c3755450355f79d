package serve

import (
	"context"
	"errors"
	"net/http"

	"github.com/coder/websocket"
)

// parseErrorFrame and the frames below are the reference server's answers
// to a WebSocket frame it cannot take (ws-server.js).
var (
	parseErrorFrame   = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	notObjectFrame    = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}`)
	reinitializeFrame = `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"Initialize not allowed on existing connection"}}`
)

// serveWebSocket upgrades to a WebSocket (101 with Acp-Connection-Id) and
// carries JSON-RPC in text frames both ways. The first frame must be
// initialize; the connection is registered once it is answered.
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if s.Draining() {
		stopping(w)
		return
	}
	c := s.newConn(overWS)
	w.Header().Set(headerConnectionID, c.id)
	// The Origin was checked already, and more strictly than Accept would
	// (which compares it with Host, which DNS rebinding controls).
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		c.log.Debug("websocket upgrade failed", "err", err)
		c.cancel()
		return
	}
	ws.SetReadLimit(s.opts.MaxBodyBytes)
	c.closeTransport = func() { _ = ws.CloseNow() }
	mb, _ := c.acquire("")
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		c.pump(mb, func(msg []byte) error { return ws.Write(c.ctx, websocket.MessageText, msg) })
	}()
	// The socket is hijacked: the request's goroutine, whose stack grew
	// while it parsed the request and the handshake, may end; a fresh one
	// with a small stack reads the frames (an idle connection costs less).
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		c.readFrames(ws)
	}()
}

// readFrames reads the client's frames until the socket or the conn ends.
func (c *conn) readFrames(ws *websocket.Conn) {
	started := false
	defer func() {
		if !started {
			c.close("websocket ended before initialize")
		}
	}()
	for {
		typ, data, err := ws.Read(c.ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) || errors.Is(err, context.Canceled) {
				c.close("client closed the websocket")
			} else {
				c.close("websocket read failed: " + err.Error())
			}
			return
		}
		if typ != websocket.MessageText {
			c.log.Warn("ignoring a binary websocket frame")
			continue
		}
		msg, kind := parseMessage(data)
		switch kind {
		case notJSON:
			c.pushLocal(parseErrorFrame)
			continue
		case isBatch:
			c.pushLocal(batchError)
			continue
		case notObject:
			c.pushLocal(notObjectFrame)
			continue
		}
		if !started {
			if msg.isResponseShaped() {
				continue
			}
			if !msg.isInitialize() || string(msg.env.ID) == "null" {
				_ = ws.Close(websocket.StatusProtocolError, "First message must be initialize")
				c.close("first websocket message was not initialize")
				return
			}
			started = true
			c.srv.register(c)
			c.start(c.inRead)
		} else if msg.isInitialize() {
			c.pushLocal([]byte(sprintf(reinitializeFrame, msg.env.ID)))
			continue
		}
		if err := c.deliver(msg.compact); err != nil {
			return
		}
	}
}
