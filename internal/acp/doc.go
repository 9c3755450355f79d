// Package acp holds corvid's own Agent Client Protocol v1 wire types and its
// JSON-RPC 2.0 connection over newline-delimited JSON.
//
// It knows nothing of agents: internal/acpserver is its only importer outside
// tests. Start with Conn (conn.go) for the transport and the *Request /
// *Response types for the wire shapes. Types follow
// shared/acp-schema/v1/schema.json field for field; they are lenient on input
// (unknown fields ignored, null = absent) and strict on output (empty
// optionals omitted, empty results are {} and never null).
package acp

// ProtocolVersion is the only ACP version corvid speaks.
const ProtocolVersion = 1

// Meta is the _meta extension object every ACP type may carry.
type Meta map[string]any
