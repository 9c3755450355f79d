package acp

import (
	"bytes"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// envelopeSeeds are frames whose envelope is easy to get wrong without a
// full decode: escaped and repeated member names, names in another case,
// braces and quotes inside strings, whitespace everywhere, odd ids.
var envelopeSeeds = []string{
	`{"jsonrpc":"2.0","\u006dethod":"a","id":1}`,
	`{"jsonrpc":"2.0","method":"a","method":"b","id":1,"id":"x"}`,
	`{"jsonrpc":"2.0","Method":"a","ID":1}`,
	`{"JSONRPC":"2.0","method":"a"}`,
	`{"jsonrpc":"2\u002e0","method":"a\u0062","id":"\u0031"}`,
	` { "jsonrpc" : "2.0" , "params" : { "a" : "}\"]{" , "b" : [ 1 , { } ] } , "method" : "m" } `,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\xffx\",\"params\":null}",
	`{"jsonrpc":"2.0","method":"","id":1}`,
	`{"jsonrpc":"2.0","method":null,"id":1}`,
	`{"jsonrpc":"2.0","method":5}`,
	`{"jsonrpc":null,"method":"a"}`,
	`{"jsonrpc":"2.0","id":-0,"result":null}`,
	`{"jsonrpc":"2.0","id":123456789012345678,"result":1}`,
	`{"jsonrpc":"2.0","id":1234567890123456789,"result":1}`,
	`{"jsonrpc":"2.0","id":9223372036854775808,"result":1}`,
	`{"jsonrpc":"2.0","id":1e2,"result":true}`,
	`{"jsonrpc":"2.0","id":"a\"b","error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":"not an object"}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"error":null}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0"}`,
	`{}`,
	`{"a":{"id":1,"method":"x"},"jsonrpc":"2.0","method":"y"}`,
	`"just a string"`,
	`not json`,
	// For the one walk that checks a frame as it finds its members: a
	// member or the frame left open or ended twice, space that is not
	// JSON's, the nesting limit inside a member.
	`{"jsonrpc":"2.0","method":"m"`, `{"jsonrpc":"2.0","method":"m",}`, `{"jsonrpc" "2.0"}`, `{"jsonrpc":}`,
	`{"jsonrpc":"2.0","method":"m"}}`, `{"jsonrpc":"2.0","method":"m"} x`, `{} x`, `{ } `, `{"id":1 "method":"m"}`,
	`{"jsonrpc":"2.0","method":"m","params":{"a":[1,2}}`, `{"jsonrpc":"2.0","method":"m\u00"}`, `{"\u006d":"m"`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\u00a0", "\u00a0{\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
	"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":\"\x01\"}",
	`{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat("[", maxNesting-1) + strings.Repeat("]", maxNesting-1) + `}`,
	`{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting) + `}`,
	`{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat(`{"a":`, maxNesting-1) + "1" + strings.Repeat("}", maxNesting-1) + `}`,
	`{"jsonrpc":"2.0","method":"m","params":` + strings.Repeat(`{"a":`, maxNesting) + "1" + strings.Repeat("}", maxNesting) + `}`,
}

// TestEnvelopeMatchesMapDecode checks the one-pass envelope against the
// map decode it replaced (decodeMessageMap), frame by frame.
func TestEnvelopeMatchesMapDecode(t *testing.T) {
	for _, s := range append(append([]string{}, envelopeSeeds...), fuzzSeeds...) {
		checkSameDecode(t, []byte(s))
	}
}

func FuzzEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkSameDecode(t, bytes.TrimSpace(line)) })
}

func checkSameDecode(t *testing.T, line []byte) {
	t.Helper()
	got, gotErr := decodeMessage(line)
	want, wantErr := decodeMessageMap(line)
	if !reflect.DeepEqual(gotErr, wantErr) {
		t.Fatalf("%q: error %v, the map decode says %v", line, gotErr, wantErr)
	}
	if (got == nil) != (want == nil) {
		t.Fatalf("%q: message %+v, the map decode says %+v", line, got, want)
	}
	if got == nil {
		return
	}
	if got.hasID != want.hasID || !bytes.Equal(got.ID, want.ID) || got.Method != want.Method ||
		!bytes.Equal(got.Params, want.Params) || (got.Params == nil) != (want.Params == nil) ||
		!bytes.Equal(got.Result, want.Result) || (got.Result == nil) != (want.Result == nil) ||
		!reflect.DeepEqual(got.Error, want.Error) {
		t.Fatalf("%q: message %+v, the map decode says %+v", line, got, want)
	}
}

// decodeMessageMap is decodeMessage as it was before the one-pass
// envelope (issue 36): the reference the fuzzer compares it with.
func decodeMessageMap(line []byte) (*wireMessage, *Error) {
	if !json.Valid(line) {
		return nil, NewError(CodeParseError, "Parse error", "the line is not valid JSON")
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		detail := "expected a JSON object"
		if trimmed[0] == '[' {
			detail = "batch arrays are not supported in ACP v1; send one JSON object per line"
		}
		return nil, NewError(CodeInvalidRequest, "Invalid request", detail)
	}
	// The values alias line, which is this message's own (readLine makes
	// a fresh one per line): params are not copied.
	var fields map[string]lineSpan
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, NewError(CodeParseError, "Parse error", err.Error())
	}
	msg := &wireMessage{}
	if id, ok := fields["id"]; ok {
		if !validIDMap(json.RawMessage(id)) {
			return nil, NewError(CodeInvalidRequest, "Invalid request", "id must be a string, a whole number within int64, or null")
		}
		// A copy: the id outlives the line (in Conn.active, the answer).
		msg.ID, msg.hasID = echoableID(json.RawMessage(bytes.Clone(id))), true
	}
	var version string
	if v, ok := fields["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return msg, NewError(CodeInvalidRequest, "Invalid request", `"jsonrpc" must be "2.0"`)
	}
	if m, ok := fields["method"]; ok {
		if json.Unmarshal(m, &msg.Method) != nil || msg.Method == "" {
			return msg, NewError(CodeInvalidRequest, "Invalid request", `"method" must be a non-empty string`)
		}
		if p, ok := fields["params"]; ok && !bytes.Equal(bytes.TrimSpace(p), []byte("null")) {
			msg.Params = json.RawMessage(p)
		}
		return msg, nil
	}
	if !msg.hasID {
		return msg, NewError(CodeInvalidRequest, "Invalid request", `a message needs "method" (request or notification) or "id" (response)`)
	}
	res, hasRes := fields["result"]
	errField, hasErr := fields["error"]
	if hasRes == hasErr {
		return nil, NewError(CodeInvalidRequest, "Invalid request", `a response has exactly one of "result" and "error"`)
	}
	msg.Result = json.RawMessage(res)
	if hasErr {
		msg.Error = &Error{}
		if json.Unmarshal(errField, msg.Error) != nil {
			msg.Error = &Error{Code: CodeInternalError, Message: "malformed error object from peer"}
		}
	}
	return msg, nil
}
func validIDMap(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case 'n':
		return string(id) == "null"
	default:
		// The schema's RequestId is an int64 "integer", which in its JSON
		// Schema 2020-12 includes 1.0 and 1e2: any number whose value is a
		// whole int64 is valid, and it is echoed byte for byte.
		if id[0] != '-' && (id[0] < '0' || id[0] > '9') || !json.Valid(id) {
			return false
		}
		r, ok := new(big.Rat).SetString(string(id))
		return ok && r.IsInt() && r.Num().IsInt64()
	}
}
