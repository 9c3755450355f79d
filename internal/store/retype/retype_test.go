package retype

import "testing"

func TestRowTypesWhatEarlierReleasesStoredAsMeta(t *testing.T) {
	for _, c := range []struct{ kind, in, wantKind, want string }{
		{"user_message_chunk",
			`{"kind":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"go"},"meta":{"codebuddy.ai/conversationRequestId":"0198a"}}`,
			"user_message_chunk",
			`{"kind":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"go"},"turnId":"0198a"}`},
		{"agent_message_chunk",
			`{"kind":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"},"meta":{"codebuddy.ai/memberEvent":"a","corvid.dev/subagent":{"depth":2,"id":"sub_1","name":"a","parentToolCallId":"t1","background":true}}}`,
			"agent_message_chunk",
			`{"kind":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"},"member":{"id":"sub_1","name":"a","parentToolCallId":"t1","depth":2,"background":true}}`},
		{"agent_message_chunk",
			`{"kind":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"{}"},"meta":{"corvid.dev/finalOutput":{"format":"json"}}}`,
			"agent_message_chunk",
			`{"kind":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"{}"},"finalOutput":{"format":"json"}}`},
		{"usage_update",
			`{"kind":"usage_update","usage":{"used":1,"size":2},"meta":{"corvid.dev/subagentUsage":{"inputTokens":3,"outputTokens":4}}}`,
			"usage_update",
			`{"kind":"usage_update","usage":{"used":1,"size":2},"subagentUsage":{"inputTokens":3,"outputTokens":4}}`},
		{"session_info_update",
			`{"kind":"session_info_update","meta":{"codebuddy.ai/teamUpdate":{"teamName":"t","type":"team_created"}}}`,
			"team_update",
			`{"kind":"team_update","team":{"teamName":"t","type":"team_created"}}`},
		{"session_info_update",
			`{"kind":"session_info_update","meta":{"codebuddy.ai/requestId":"r","codebuddy.ai/unsolicitedTurn":{"reason":"background_drain","requestId":"r"}}}`,
			"drain_started",
			`{"kind":"drain_started","drain":{"requestId":"r","reason":"background_drain"}}`},
		{"session_info_update",
			`{"kind":"session_info_update","meta":{"codebuddy.ai/requestId":"r","codebuddy.ai/sessionEnd":{"error":"boom","requestId":"r"}}}`,
			"drain_ended",
			`{"kind":"drain_ended","drain":{"requestId":"r","error":"boom"}}`},
		{"tool_call",
			`{"kind":"tool_call","toolCall":{"id":"c","name":"read"},"meta":{"unknown.example/key":1}}`,
			"tool_call",
			`{"kind":"tool_call","toolCall":{"id":"c","name":"read"}}`},
	} {
		kind, got, changed := Row(c.kind, []byte(c.in))
		if !changed || kind != c.wantKind || string(got) != c.want {
			t.Errorf("Row(%s, %s)\n= %s %s (changed %v)\nwant %s %s", c.kind, c.in, kind, got, changed, c.wantKind, c.want)
		}
	}
}

func TestRowLeavesUntaggedAndTypedRowsAlone(t *testing.T) {
	for _, in := range []string{
		`{"kind":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"the word \"meta\" in text"}}`,
		`{"kind":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"go"},"turnId":"0198a"}`,
		`{"role":"user","parts":[{"type":"text","text":"\"meta\":{}"}]}`,
		`not json "meta"`,
		``,
	} {
		kind, got, changed := Row("k", []byte(in))
		if changed || kind != "k" || string(got) != in {
			t.Errorf("Row(%s) = %s %s changed %v; want it unchanged", in, kind, got, changed)
		}
	}
}

func TestSessionConfigRenamesTheCodeModeKeys(t *testing.T) {
	got, changed := SessionConfig([]byte(`{"codebuddy.ai/codeMode":"off","codebuddy.ai/mainAgent":"cli","thoughtLevel":"high"}`))
	if !changed || string(got) != `{"codeMode":"off","mainAgent":"cli","thoughtLevel":"high"}` {
		t.Fatalf("SessionConfig = %s (changed %v)", got, changed)
	}
	for _, in := range []string{``, `{"thoughtLevel":"high"}`, `{"codeMode":"all"}`} {
		if got, changed := SessionConfig([]byte(in)); changed || string(got) != in {
			t.Errorf("SessionConfig(%s) = %s changed %v", in, got, changed)
		}
	}
}
