package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSON-RPC and ACP error codes used by the editor.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	CodeResourceNotFound = -32002

	// CodeNoResponse is not on the wire: Call returns it when the agent never answered
	// (context done, or the agent closed stdout). The test has already been failed.
	CodeNoResponse = -1
)

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if e == nil {
		return "<nil>"
	}
	if len(e.Data) > 0 {
		return fmt.Sprintf("rpc error %d: %s (data %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message)
}

// Message is one decoded JSON-RPC message as received from the agent.
// Presence is tracked separately from value, so `"id": null` differs from no id.
type Message struct {
	Seq    int             // index of the line in the transcript
	ID     json.RawMessage // compact id; nil when the message has no id member
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError
	Raw    json.RawMessage // the whole line
}

// IsRequest, IsNotification and IsResponse classify the message.
func (m Message) IsRequest() bool      { return m.Method != "" && m.ID != nil }
func (m Message) IsNotification() bool { return m.Method != "" && m.ID == nil }
func (m Message) IsResponse() bool     { return m.Method == "" && m.ID != nil }

// envelope is the raw member set of a line, used to classify it strictly.
type envelope map[string]json.RawMessage

// decodeMessage parses one line and checks the JSON-RPC 2.0 envelope. It returns a
// description of what is wrong when the line is not a JSON-RPC 2.0 message.
func decodeMessage(line []byte) (Message, string) {
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil || env == nil {
		return Message{}, "not a JSON object"
	}
	m := Message{Raw: json.RawMessage(bytes.Clone(line))}
	var version string
	if err := json.Unmarshal(env["jsonrpc"], &version); err != nil || version != "2.0" {
		return m, `"jsonrpc" is not "2.0"`
	}
	if id, ok := env["id"]; ok {
		m.ID = compact(id)
		switch m.ID[0] {
		case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			return m, "id is not a string, number or null"
		}
	}
	if raw, ok := env["method"]; ok {
		if err := json.Unmarshal(raw, &m.Method); err != nil || m.Method == "" {
			return m, "method is not a non-empty string"
		}
		if _, ok := env["result"]; ok {
			return m, "a request or notification carries result"
		}
		if _, ok := env["error"]; ok {
			return m, "a request or notification carries error"
		}
		if p, ok := env["params"]; ok {
			m.Params = compact(p)
			if m.Params[0] != '{' && m.Params[0] != '[' {
				return m, "params is neither an object nor an array"
			}
		}
		return m, ""
	}
	if m.ID == nil {
		return m, "neither a request (method), a notification (method) nor a response (id)"
	}
	res, hasResult := env["result"]
	errRaw, hasError := env["error"]
	switch {
	case hasResult && hasError:
		return m, "a response carries both result and error"
	case hasResult:
		m.Result = compact(res)
	case hasError:
		m.Error = &RPCError{}
		if err := json.Unmarshal(errRaw, m.Error); err != nil {
			return m, "error is not a JSON-RPC error object"
		}
	default:
		return m, "a response carries neither result nor error"
	}
	return m, ""
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return bytes.Clone(raw)
	}
	return b.Bytes()
}

// idKey makes a map key from an id value ("0", "\"a\"", "null").
func idKey(id json.RawMessage) string { return string(compact(id)) }

// marshalID encodes an id given as int, string, json.RawMessage or nil (null).
func marshalID(id any) json.RawMessage {
	switch v := id.(type) {
	case nil:
		return json.RawMessage("null")
	case json.RawMessage:
		return compact(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return json.RawMessage("null")
		}
		return b
	}
}

// shorten keeps failure messages readable when a line is huge.
func shorten(s string) string {
	const max = 4000
	if len(s) <= max {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes more)", s[:max], len(s)-max)
}
