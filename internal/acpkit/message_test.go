package acpkit

import "testing"

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		line, problem    string
		req, notif, resp bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`, "", true, false, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"a":1}}`, "", false, true, false},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, "", false, false, true},
		{`{"jsonrpc":"2.0","id":"a","result":null}`, "", false, false, true},
		{`[1]`, NotAnObject, false, false, false},
		{`{"id":1,"result":{}}`, `"jsonrpc" is not "2.0"`, false, false, true},
		{`{"jsonrpc":"2.0","id":{},"result":{}}`, "id is not a string, number or null", false, false, true},
		{`{"jsonrpc":"2.0","method":"x","params":3}`, "params is neither an object nor an array", false, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, "a request or notification carries result", true, false, false},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, "a response carries both result and error", false, false, true},
		{`{"jsonrpc":"2.0","id":1}`, "a response carries neither result nor error", false, false, true},
		{`{"jsonrpc":"2.0","result":{}}`, "neither a request (method), a notification (method) nor a response (id)", false, false, false},
		{`{"jsonrpc":"2.0","id":1,"error":"boom"}`, "error is not a JSON-RPC error object", false, false, true},
	} {
		m, problem := Decode([]byte(c.line))
		if problem != c.problem {
			t.Errorf("%s: problem %q, want %q", c.line, problem, c.problem)
		}
		if m.IsRequest() != c.req || m.IsNotification() != c.notif || m.IsResponse() != c.resp {
			t.Errorf("%s: request=%v notification=%v response=%v", c.line, m.IsRequest(), m.IsNotification(), m.IsResponse())
		}
		if string(m.Raw) != c.line {
			t.Errorf("%s: Raw = %s", c.line, m.Raw)
		}
	}
	m, _ := Decode([]byte(`{"jsonrpc":"2.0", "id": 7, "result": { "a" : [1, 2] }}`))
	if string(m.Result) != `{"a":[1,2]}` || IDKey(m.ID) != "7" || string(MarshalID("7")) != `"7"` || string(MarshalID(nil)) != "null" {
		t.Errorf("compact forms: result %s id %s", m.Result, m.ID)
	}
	if IDKey([]byte(`"caf\u00e9 \"7\""`)) != IDKey([]byte(`"café \"7\""`)) {
		t.Error("the same string id with other escapes has another key")
	}
	if IDKey([]byte(` null `)) != "null" || IDKey([]byte(`""`)) == "null" {
		t.Errorf("null id key %q", IDKey([]byte(` null `)))
	}
	if IDKey([]byte(`1`)) == IDKey([]byte(`1.0`)) || IDKey([]byte(`1`)) == IDKey([]byte(`"1"`)) {
		t.Error("ids 1, 1.0 and \"1\" must differ")
	}
}
