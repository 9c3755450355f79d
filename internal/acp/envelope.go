package acp

import (
	"bytes"
	"encoding/json"
)

// envelope is the top-level members of a frame that JSON-RPC uses, each
// the bytes of its value in the line (nil when absent; a present value is
// never empty). A repeated member keeps its last value, as a decode into a
// map does.
type envelope struct {
	id, jsonrpc, method, params, result, error lineSpan
}

// envelopeOf returns the members of obj, a JSON object that json.Valid
// accepted (surrounding whitespace trimmed). It walks the top level once,
// skipping values without decoding them, instead of decoding the line a
// second time into a map (issue 36: that decode was most of a streamed
// chunk's cost in the terminal UI). A member name with an escape is rare
// and compared after unescaping, so such a line takes a map decode.
func envelopeOf(obj []byte) envelope {
	if env, ok := scanEnvelope(obj); ok {
		return env
	}
	var fields map[string]lineSpan
	_ = json.Unmarshal(obj, &fields) // cannot fail: obj is a valid JSON object
	return envelope{
		id: fields["id"], jsonrpc: fields["jsonrpc"], method: fields["method"],
		params: fields["params"], result: fields["result"], error: fields["error"],
	}
}

// scanEnvelope does envelopeOf's walk; ok is false if a member name holds
// an escape. obj must be valid JSON starting with '{'.
func scanEnvelope(obj []byte) (env envelope, ok bool) {
	i := skipJSONSpace(obj, 1)
	for i < len(obj) && obj[i] != '}' {
		if obj[i] == ',' {
			i = skipJSONSpace(obj, i+1)
		}
		end := i + 1 // obj[i] is the name's opening quote
		for obj[end] != '"' {
			if obj[end] == '\\' {
				return envelope{}, false
			}
			end++
		}
		name := obj[i+1 : end]
		i = skipJSONSpace(obj, end+1) // at ':'
		i = skipJSONSpace(obj, i+1)   // at the value
		vEnd := skipJSONValue(obj, i) // just past it
		env.set(name, lineSpan(obj[i:vEnd:vEnd]))
		i = skipJSONSpace(obj, vEnd)
	}
	return env, true
}

// scanValidEnvelope is validJSON and envelopeOf in one walk, for a line
// whose first non-space byte, at b[i], is '{': it checks each member's
// value as it finds it (validValueEnd) rather than checking the whole
// line first and then skipping the same values again (issue 36: each
// streamed chunk's 4 KiB of text was walked twice). valid says the line
// is JSON (json.Valid); when it is and a member name holds an escape,
// env comes from envelopeOf. FuzzEnvelope holds decodeMessage, built on
// it, to json.Valid and a map decode.
func scanValidEnvelope(b []byte, i int) (env envelope, valid bool) {
	start, escaped := i, false
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return env, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return envelope{}, false
		}
		end := stringEnd(b, i)
		if end < 0 {
			return envelope{}, false
		}
		name := b[i+1 : end-1]
		escaped = escaped || bytes.IndexByte(name, '\\') >= 0
		if i = skipSpace(b, end); i >= len(b) || b[i] != ':' {
			return envelope{}, false
		}
		i = skipSpace(b, i+1)
		vEnd := validValueEnd(b, i, maxNesting-1) // inside the frame's object
		if vEnd < 0 {
			return envelope{}, false
		}
		env.set(name, lineSpan(b[i:vEnd:vEnd]))
		if i = skipSpace(b, vEnd); i >= len(b) {
			return envelope{}, false
		}
		if b[i] == '}' {
			break
		}
		if b[i] != ',' {
			return envelope{}, false
		}
		i = skipSpace(b, i+1)
	}
	end := i + 1
	if skipSpace(b, end) != len(b) {
		return envelope{}, false
	}
	if escaped {
		return envelopeOf(b[start:end]), true
	}
	return env, true
}

// set keeps val as the member name's value if JSON-RPC uses that member.
func (env *envelope) set(name []byte, val lineSpan) {
	switch string(name) {
	case "id":
		env.id = val
	case "jsonrpc":
		env.jsonrpc = val
	case "method":
		env.method = val
	case "params":
		env.params = val
	case "result":
		env.result = val
	case "error":
		env.error = val
	}
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipJSONValue returns the index just past the valid JSON value at b[i].
func skipJSONValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipJSONString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipJSONString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	default: // a number, true, false or null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipJSONString returns the index just past the valid JSON string whose
// opening quote is b[i].
func skipJSONString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// plainJSONString returns the value of the JSON string s if it needs no
// decoding: no escapes, and only printable ASCII (a decode would replace
// invalid UTF-8, so anything else goes through encoding/json).
func plainJSONString(s []byte) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	for _, c := range s[1 : len(s)-1] {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(s[1 : len(s)-1]), true
}

// jsonString decodes the JSON string s; ok is false if s is not one.
func jsonString(s []byte) (string, bool) {
	if v, ok := plainJSONString(s); ok {
		return v, true
	}
	var v string
	if json.Unmarshal(s, &v) != nil {
		return "", false
	}
	return v, true
}

// smallJSONInt reports whether id is an integer literal of at most 18
// digits (within int64 whatever its value) in JSON's grammar.
func smallJSONInt(id []byte) bool {
	d := id
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || (d[0] == '0' && len(d) > 1) {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
