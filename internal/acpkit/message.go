package acpkit

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSON-RPC 2.0 and ACP error codes.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeAuthRequired     = -32000
	CodeResourceNotFound = -32002
	CodeRequestCancelled = -32800
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

// Message is one decoded JSON-RPC message. Presence is tracked apart from value: ID is nil
// when the message has no id member (`"id": null` is the non-nil "null"), Result is nil when
// it has no result member.
type Message struct {
	Seq    int             // index of the line in the reader's transcript; Decode leaves it 0
	ID     json.RawMessage // compact
	Method string
	Params json.RawMessage // compact
	Result json.RawMessage // compact
	Error  *RPCError
	Raw    json.RawMessage // the whole line
}

// IsRequest, IsNotification and IsResponse classify the message.
func (m Message) IsRequest() bool      { return m.Method != "" && m.ID != nil }
func (m Message) IsNotification() bool { return m.Method != "" && m.ID == nil }
func (m Message) IsResponse() bool     { return m.Method == "" && m.ID != nil }

// NotAnObject is the problem Decode reports for a line that is not a JSON object.
const NotAnObject = "not a JSON object"

// Decode parses one line. It fills in every member it can read, and problem describes the
// first way the line breaks the JSON-RPC 2.0 envelope ("" when it is a well-formed request,
// notification or response; [NotAnObject] when nothing could be read).
func Decode(line []byte) (m Message, problem string) {
	m.Raw = json.RawMessage(bytes.Clone(line))
	var env map[string]json.RawMessage
	if err := json.Unmarshal(line, &env); err != nil || env == nil {
		return m, NotAnObject
	}
	var notes []string
	note := func(s string) { notes = append(notes, s) }
	var version string
	if err := json.Unmarshal(env["jsonrpc"], &version); err != nil || version != "2.0" {
		note(`"jsonrpc" is not "2.0"`)
	}
	if id, ok := env["id"]; ok {
		m.ID = Compact(id)
		switch m.ID[0] {
		case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			note("id is not a string, number or null")
		}
	}
	_, hasMethod := env["method"]
	if hasMethod {
		if err := json.Unmarshal(env["method"], &m.Method); err != nil || m.Method == "" {
			note("method is not a non-empty string")
		}
	}
	if p, ok := env["params"]; ok {
		m.Params = Compact(p)
		if hasMethod && m.Params[0] != '{' && m.Params[0] != '[' {
			note("params is neither an object nor an array")
		}
	}
	res, hasResult := env["result"]
	if hasResult {
		m.Result = Compact(res)
	}
	errRaw, hasError := env["error"]
	if hasError {
		m.Error = &RPCError{}
		if err := json.Unmarshal(errRaw, m.Error); err != nil {
			m.Error = &RPCError{Message: "(malformed error object)"}
			note("error is not a JSON-RPC error object")
		}
	}
	if s := shapeProblem(hasMethod, m.ID != nil, hasResult, hasError); s != "" {
		note(s)
	}
	if len(notes) > 0 {
		return m, notes[0]
	}
	return m, ""
}

// shapeProblem says how the members present break the shape of a request,
// notification or response ("" when they do not).
func shapeProblem(hasMethod, hasID, hasResult, hasError bool) string {
	switch {
	case hasMethod && hasResult:
		return "a request or notification carries result"
	case hasMethod && hasError:
		return "a request or notification carries error"
	case hasMethod:
	case !hasID:
		return "neither a request (method), a notification (method) nor a response (id)"
	case hasResult && hasError:
		return "a response carries both result and error"
	case !hasResult && !hasError:
		return "a response carries neither result nor error"
	}
	return ""
}

// Compact returns raw without insignificant white space (raw itself if it is not JSON).
func Compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return bytes.Clone(raw)
	}
	return b.Bytes()
}

// IDKey makes a map key from an id value ("0", "\"a\"", "null"). Strings are compared by
// value, so an id echoed with different escapes ("\u00e9" for "é") is the same id; numbers
// by their text, as JSON-RPC peers must echo them unchanged.
func IDKey(id json.RawMessage) string {
	id = Compact(id)
	var s string
	if len(id) > 0 && id[0] == '"' && json.Unmarshal(id, &s) == nil {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return string(Compact(id))
}

// MarshalID encodes an id given as an integer, a string, a json.RawMessage or nil (null).
func MarshalID(id any) json.RawMessage {
	switch v := id.(type) {
	case nil:
		return json.RawMessage("null")
	case json.RawMessage:
		return Compact(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return json.RawMessage("null")
		}
		return b
	}
}
