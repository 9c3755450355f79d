package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// message is one client message, checked as far as the transport must:
// valid JSON, one object, and where it routes.
type message struct {
	env     envelope
	compact []byte // the JSON on one line, as NDJSON needs it
}

type messageKind int

const (
	isObject messageKind = iota
	notJSON
	isBatch
	notObject
)

func parseMessage(body []byte) (*message, messageKind) {
	body = bytes.TrimSpace(body)
	if !json.Valid(body) {
		return nil, notJSON
	}
	switch {
	case len(body) > 0 && body[0] == '[':
		return nil, isBatch
	case len(body) == 0 || body[0] != '{':
		return nil, notObject
	}
	m := &message{}
	var buf bytes.Buffer
	if json.Compact(&buf, body) != nil || json.Unmarshal(body, &m.env) != nil {
		// Valid JSON whose fields have unexpected types: the handler
		// answers it (-32600) as it would on stdio.
		m.env = envelope{}
	}
	m.compact = buf.Bytes()
	return m, isObject
}

// isInitialize is the reference server's test: jsonrpc "2.0", an id, and
// method "initialize".
func (m *message) isInitialize() bool {
	if m.env.Method == nil || *m.env.Method != "initialize" || len(m.env.ID) == 0 {
		return false
	}
	var v struct {
		JSONRPC string `json:"jsonrpc"`
	}
	_ = json.Unmarshal(m.compact, &v)
	return v.JSONRPC == "2.0"
}

// isResponseShaped is a message with an id, no method, and a result or
// an error: an answer to a request of ours.
func (m *message) isResponseShaped() bool {
	if m.env.Method != nil || len(m.env.ID) == 0 {
		return false
	}
	var v map[string]json.RawMessage
	_ = json.Unmarshal(m.compact, &v)
	_, hasResult := v["result"]
	_, hasError := v["error"]
	return hasResult || hasError
}

func sprintf(format string, id []byte) string { return fmt.Sprintf(format, id) }
