package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/dashboard"
)

// Header names of the RFD.
const (
	headerConnectionID = "Acp-Connection-Id"
	headerSessionID    = "Acp-Session-Id"
)

// sessionScoped are the methods whose POST must name their session in
// Acp-Session-Id (the SDK's SESSION_SCOPED_METHODS, protocol.js).
var sessionScoped = []string{
	"session/cancel", "session/close", "session/delete", "session/fork",
	"session/load", "session/prompt", "session/resume",
	"session/set_config_option", "session/set_mode", "session/set_model",
}

// batchError is the reference server's answer to a JSON-RPC batch.
var batchError = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: JSON-RPC batches are not supported"}}`)

// acpHandler serves /acp on one TCP listener; self is that listener's own
// origin (http://HOST:PORT).
type acpHandler struct {
	srv  *Server
	self string
}

func (h *acpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		text(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if !h.originAllowed(r.Header.Get("Origin")) {
		text(w, http.StatusForbidden, "Forbidden origin")
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			h.srv.serveWebSocket(w, r)
			return
		}
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		text(w, http.StatusMethodNotAllowed, "Method Not Allowed")
	}
}

// authorized checks the bearer token in constant time, or the dashboard's
// login cookie (a browser cannot set Authorization on a WebSocket); with
// no token configured every request passes (a loopback or unix listener).
func (h *acpHandler) authorized(r *http.Request) bool {
	return h.srv.dash.Authorized(r)
}

// page serves the dashboard (internal/dashboard) at / under the same
// Origin rule as /acp; the dashboard checks the token or cookie itself,
// as /login needs neither.
func (h *acpHandler) page() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.originAllowed(r.Header.Get("Origin")) {
			text(w, http.StatusForbidden, "Forbidden origin")
			return
		}
		h.srv.dash.ServeHTTP(w, r)
	})
}

// withHeaders puts the dashboard's security headers (CSP, no framing, no
// sniffing) on every response of the listener, /acp's too.
func withHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dashboard.SetHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}

// originAllowed admits requests without an Origin (not a browser), the
// listener's own origin (localhost and 127.0.0.1 alike on loopback), and
// the configured ones. Anything else is a page on another site, which must
// not drive a local agent (DNS rebinding): its Host may even be ours.
func (h *acpHandler) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	origin = strings.TrimSuffix(strings.ToLower(origin), "/")
	if origin == strings.ToLower(h.self) || slices.Contains(h.srv.opts.AllowOrigins, origin) {
		return true
	}
	port := h.self[strings.LastIndexByte(h.self, ':'):]
	if strings.HasPrefix(h.self, "http://127.") || strings.HasPrefix(h.self, "http://[::1]") {
		return origin == "http://localhost"+port || origin == "http://127.0.0.1"+port || origin == "http://[::1]"+port
	}
	return false
}

func (h *acpHandler) post(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		text(w, http.StatusUnsupportedMediaType, "Unsupported Media Type")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.srv.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			text(w, http.StatusRequestEntityTooLarge, "Request body too large")
			return
		}
		text(w, http.StatusBadRequest, "Invalid JSON")
		return
	}
	msg, kind := parseMessage(body)
	switch kind {
	case notJSON:
		text(w, http.StatusBadRequest, "Invalid JSON")
		return
	case isBatch:
		jsonBody(w, http.StatusBadRequest, batchError, "")
		return
	case notObject:
		text(w, http.StatusBadRequest, "Invalid JSON-RPC message")
		return
	}
	connID := r.Header.Get(headerConnectionID)
	if msg.isInitialize() {
		if connID != "" {
			text(w, http.StatusBadRequest, "Initialize not allowed on existing connection")
			return
		}
		h.initialize(w, r, msg)
		return
	}
	c := h.connection(w, connID)
	if c == nil {
		return
	}
	if status, why := c.admit(msg, r.Header.Get(headerSessionID), h.srv.opts.MaxIDLength); status != 0 {
		text(w, status, why)
		return
	}
	if err := c.deliver(msg.compact); err != nil {
		text(w, http.StatusNotFound, "Unknown Acp-Connection-Id")
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// stopping answers a new connection while the daemon drains: 503.
func stopping(w http.ResponseWriter) {
	text(w, http.StatusServiceUnavailable, "The daemon is stopping")
}

// initialize opens a connection: the handler's answer is the POST's body,
// with the new connection's id in Acp-Connection-Id.
func (h *acpHandler) initialize(w http.ResponseWriter, r *http.Request, msg *message) {
	if len(msg.env.ID) == 0 || string(msg.env.ID) == "null" {
		text(w, http.StatusBadRequest, "Initialize request must include an ID")
		return
	}
	if h.srv.Draining() {
		stopping(w)
		return
	}
	c := h.srv.newConn(overHTTP)
	h.srv.register(c)
	c.start(c.inRead)
	if err := c.deliver(msg.compact); err != nil {
		c.close("initialize failed")
		text(w, http.StatusInternalServerError, "Initialize failed")
		return
	}
	select {
	case first := <-c.initial:
		var env envelope
		if json.Unmarshal(first, &env) != nil || !env.isResponse() || !bytes.Equal(env.ID, msg.env.ID) {
			c.close("initialize answered out of order")
			text(w, http.StatusInternalServerError, "Initialize failed")
			return
		}
		jsonBody(w, http.StatusOK, first, c.id)
	case <-r.Context().Done():
		c.close("client gave up on initialize")
	case <-c.ctx.Done():
		text(w, http.StatusInternalServerError, "Initialize failed")
	}
}

// admit checks a connected POST's routing headers, as the reference server
// does, and records where the answer to a request goes. It returns 0 when
// the message may pass, else the status and why.
func (c *conn) admit(msg *message, headerSID string, maxID int) (int, string) {
	env := &msg.env
	key := idKey(env.ID)
	if len(key) > maxID+2 {
		return http.StatusBadRequest, "Request ID exceeds maxIdLength"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if env.isResponse() {
		route, known := c.clientRoutes[key]
		if known && route != "" && headerSID == "" {
			return http.StatusBadRequest, "Missing Acp-Session-Id"
		}
		if known && route != "" && headerSID != route {
			return http.StatusBadRequest, "Mismatched Acp-Session-Id"
		}
		delete(c.clientRoutes, key)
		return 0, ""
	}
	paramsSID := sessionIn(env.Params)
	method := ""
	if env.Method != nil {
		method = *env.Method
	}
	if (slices.Contains(sessionScoped, method) || paramsSID != "") && headerSID == "" {
		return http.StatusBadRequest, "Missing Acp-Session-Id"
	}
	if headerSID != "" && paramsSID != "" && headerSID != paramsSID {
		return http.StatusBadRequest, "Mismatched Acp-Session-Id"
	}
	if len(headerSID) > maxID {
		return http.StatusBadRequest, "Session ID exceeds maxIdLength"
	}
	if key != "" && len(env.ID) > 0 {
		route := headerSID
		if method == "session/load" {
			route = "" // its replay is the session's; its answer the connection's
		}
		c.pending[key] = route
	}
	return 0, ""
}

// get opens a receiver on the connection stream or, with Acp-Session-Id,
// on that session's stream, and writes its messages as SSE events.
func (h *acpHandler) get(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(strings.ToLower(r.Header.Get("Accept")), "text/event-stream") {
		text(w, http.StatusNotAcceptable, "Not Acceptable")
		return
	}
	c := h.connection(w, r.Header.Get(headerConnectionID))
	if c == nil {
		return
	}
	sid := r.Header.Get(headerSessionID)
	if len(sid) > h.srv.opts.MaxIDLength {
		text(w, http.StatusBadRequest, "Session ID exceeds maxIdLength")
		return
	}
	mb, ok := c.acquire(sid)
	if !ok {
		if c.isClosed() {
			text(w, http.StatusNotFound, "Unknown Acp-Connection-Id")
			return
		}
		text(w, http.StatusConflict, "Outbound stream already has an active receiver")
		return
	}
	defer c.release(sid, mb)
	rc := http.NewResponseController(w)
	// A connection closed for a limit must not leave this response blocked
	// in a write to a client that stopped reading.
	stop := context.AfterFunc(c.ctx, func() { _ = rc.SetWriteDeadline(time.Now()) })
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	var buf []byte
	for {
		msg, err := c.next(r.Context(), mb, keepAlive)
		if err != nil {
			return
		}
		buf = buf[:0]
		if msg == nil {
			buf = append(buf, ":\n\n"...)
		} else {
			buf = append(append(append(buf, "data: "...), msg...), "\n\n"...)
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

func (h *acpHandler) delete(w http.ResponseWriter, r *http.Request) {
	c := h.connection(w, r.Header.Get(headerConnectionID))
	if c == nil {
		return
	}
	c.close("client ended the connection (DELETE)")
	w.WriteHeader(http.StatusAccepted)
}

// connection is the HTTP connection connID names, or nil once w has the
// reference server's answer: 400 without an id, 404 for an unknown one.
func (h *acpHandler) connection(w http.ResponseWriter, connID string) *conn {
	if connID == "" {
		text(w, http.StatusBadRequest, "Missing Acp-Connection-Id")
		return nil
	}
	c := h.srv.lookup(connID)
	if c == nil || c.kind != overHTTP {
		text(w, http.StatusNotFound, "Unknown Acp-Connection-Id")
		return nil
	}
	return c
}

func text(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func jsonBody(w http.ResponseWriter, status int, body []byte, connID string) {
	w.Header().Set("Content-Type", "application/json")
	if connID != "" {
		w.Header().Set(headerConnectionID, connID)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
