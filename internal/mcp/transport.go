package mcp

import (
	"context"
	"errors"
	"net/http"
)

// A transport carries whole JSON-RPC 2.0 messages between corvid's MCP
// client and one server: newline-delimited JSON over a process's stdio, the
// streamable HTTP transport, or the older HTTP+SSE transport. The client
// session (requests, responses, notifications, the server's own requests)
// is built on it and knows nothing of how the bytes travel.
type transport interface {
	// Send delivers one message — a request, a notification or a response
	// to a request of the server's — as its JSON encoding (no newline).
	// Over HTTP, what the server answers to it (a JSON body or an event
	// stream) comes out of Recv.
	Send(ctx context.Context, msg []byte) error
	// Recv blocks until the next message from the server and returns its
	// JSON encoding. Once nothing more will come it returns an error:
	// io.EOF when the server ended the connection in order,
	// errSessionMissing when a streamable HTTP server no longer knows the
	// session, anything else for a broken connection.
	Recv() ([]byte, error)
	// Close ends the connection and releases what it holds; Recv then
	// returns an error. Closing twice is harmless.
	Close() error
}

// versioned is implemented by transports that must name the negotiated
// protocol version on every request after initialize (streamable HTTP's
// MCP-Protocol-Version header). The client calls it once initialize has
// been answered.
type versioned interface {
	setProtocolVersion(v string)
}

// errSessionMissing is returned by a streamable HTTP transport when the
// server answers 404 to a request that carried its Mcp-Session-Id: the
// session is gone, and a new one must be initialized.
var errSessionMissing = errors.New("the MCP server no longer knows this session")

// httpOptions configure the two HTTP transports.
type httpOptions struct {
	// URL is the server's endpoint: the one URL of streamable HTTP, or the
	// event stream's URL of HTTP+SSE.
	URL string
	// Client sends every request; it carries the configured headers (see
	// conn.httpClient) and has no overall timeout, since an event stream
	// lasts as long as the session. nil means http.DefaultClient.
	Client *http.Client
}
