// Package acp holds corvid's own Agent Client Protocol v1 wire types and its
// JSON-RPC 2.0 connection over newline-delimited JSON.
//
// It knows nothing of agents: internal/acpserver is its only importer outside
// tests. Start with Conn (conn.go) for the transport: read.go frames and
// decodes the input, dispatch.go runs the peer's requests in order,
// call.go makes our calls and routes their responses, write.go encodes and
// writes frames. The *Request / *Response types are the wire shapes, and
// validate.go checks what the schema requires beyond JSON shape. Types follow
// the official ACP v1 schema (embedded in internal/acpkit, checked against the
// upstream copy in CI) field for field; they are lenient on input
// (unknown fields ignored, null = absent) and strict on output (empty
// optionals omitted, empty results are {} and never null).
package acp

// ProtocolVersion is the only ACP version corvid speaks.
const ProtocolVersion = 1

// Meta is the _meta extension object every ACP type may carry.
type Meta map[string]any
