package jsonschema

import "testing"

var benchMessages = []struct{ name, def, instance string }{
	{"agent_message_chunk", "SessionNotification",
		`{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Reading the file now."}}}`},
	{"tool_call", "SessionNotification",
		`{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call","toolCallId":"call_7","title":"Edit main.go","kind":"edit","status":"completed","content":[{"type":"diff","path":"/w/main.go","oldText":"a","newText":"b"}],"locations":[{"path":"/w/main.go","line":12}],"rawInput":{"path":"main.go"}}}`},
	{"initialize_response", "InitializeResponse",
		`{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"embeddedContext":true},"mcpCapabilities":{"http":true},"sessionCapabilities":{"list":{},"close":{}}},"authMethods":[{"id":"api-key","name":"API key"}],"agentInfo":{"name":"corvid","version":"0.1.0"}}`},
	{"invalid_tool_call", "SessionNotification",
		`{"sessionId":"sess_1","update":{"sessionUpdate":"tool_call","toolCallId":"c","kind":"run","status":"zz"}}`},
}

func BenchmarkValidate(b *testing.B) {
	s := compileACP(b)
	for _, m := range benchMessages {
		b.Run(m.name, func(b *testing.B) {
			in := []byte(m.instance)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Validate(m.def, in)
			}
		})
	}
}

// BenchmarkReferenceValidate measures santhosh-tekuri/jsonschema on the same messages, for
// comparison.
func BenchmarkReferenceValidate(b *testing.B) {
	r := newReference(b, readACPSchema(b))
	for _, m := range benchMessages {
		b.Run(m.name, func(b *testing.B) {
			in := []byte(m.instance)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = r.valid(b, m.def, in)
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	raw := readACPSchema(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(raw); err != nil {
			b.Fatal(err)
		}
	}
}
