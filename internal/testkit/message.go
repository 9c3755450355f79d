package testkit

import (
	"encoding/json"
	"fmt"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// JSON-RPC and ACP error codes used by the editor.
const (
	CodeParseError       = acpkit.CodeParseError
	CodeInvalidRequest   = acpkit.CodeInvalidRequest
	CodeMethodNotFound   = acpkit.CodeMethodNotFound
	CodeInvalidParams    = acpkit.CodeInvalidParams
	CodeInternalError    = acpkit.CodeInternalError
	CodeRequestCancelled = acpkit.CodeRequestCancelled
	CodeResourceNotFound = acpkit.CodeResourceNotFound

	// CodeNoResponse is not on the wire: Call returns it when the agent never answered
	// (context done, or the agent closed stdout). The test has already been failed.
	CodeNoResponse = -1
)

// RPCError is a JSON-RPC error object.
type RPCError = acpkit.RPCError

// Message is one decoded JSON-RPC message as received from the agent (Seq is its index
// in the transcript). Presence is tracked separately from value, so `"id": null` differs
// from no id.
type Message = acpkit.Message

// decodeMessage parses one line and checks the JSON-RPC 2.0 envelope. It returns a
// description of what is wrong when the line is not a JSON-RPC 2.0 message.
func decodeMessage(line []byte) (Message, string) { return acpkit.Decode(line) }

// idKey makes a map key from an id value ("0", "\"a\"", "null").
func idKey(id json.RawMessage) string { return acpkit.IDKey(id) }

// marshalID encodes an id given as int, string, json.RawMessage or nil (null).
func marshalID(id any) json.RawMessage { return acpkit.MarshalID(id) }

// shorten keeps failure messages readable when a line is huge.
func shorten(s string) string {
	const max = 4000
	if len(s) <= max {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes more)", s[:max], len(s)-max)
}
