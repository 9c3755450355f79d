package acp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// validateJSON checks raw against #/$defs/<def> of the official ACP v1
// schema (internal/acpkit holds the repository's one copy).
func validateJSON(t testing.TB, def string, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		t.Fatalf("%s: not JSON: %s", def, raw)
	}
	if err := acpkit.Validate(def, raw); err != nil {
		t.Errorf("%s does not validate: %v\n%s", def, err, raw)
	}
}

// wireFrame encodes payload as Conn would: as params with a method, or as
// a result without one.
func wireFrame(t testing.TB, id, method string, payload any) []byte {
	t.Helper()
	env := &wireMessage{JSONRPC: "2.0", Method: method}
	if id != "" {
		env.ID, env.hasID = json.RawMessage(id), true
	}
	b, err := encodeFrame(env, payload)
	if err != nil {
		t.Fatalf("encode %T: %v", payload, err)
	}
	return bytes.TrimSuffix(b, []byte("\n"))
}

// checkFrame validates one outbound frame: its envelope against envDef and
// its params or result against def.
func checkFrame(t *testing.T, envDef, def, id, method string, payload any) {
	t.Helper()
	frame := wireFrame(t, id, method, payload)
	validateJSON(t, envDef, frame)
	var f map[string]json.RawMessage
	if err := json.Unmarshal(frame, &f); err != nil {
		t.Fatal(err)
	}
	inner := f["params"]
	if method == "" {
		inner = f["result"]
	}
	validateJSON(t, def, inner)
}

func ptr[T any](v T) *T { return &v }

var allBlocks = []ContentBlock{
	TextBlock(""),
	TextBlock("hello\nworld"),
	{Type: "text", Text: "with extras", Annotations: json.RawMessage(`{"audience":["user"],"priority":0.5}`), Meta: Meta{"x.dev/k": 1}},
	{Type: "image", Data: "iVBORw0KGgo=", MimeType: "image/png"},
	{Type: "image", Data: "iVBORw0KGgo=", MimeType: "image/png", URI: "file:///tmp/a.png"},
	{Type: "audio", Data: "UklGRg==", MimeType: "audio/wav"},
	{Type: "resource_link", URI: "file:///w/a.go", Name: "a.go"},
	{Type: "resource_link", URI: "file:///w/a.go", Name: "a.go", MimeType: "text/x-go", Title: "A", Description: "d", Size: ptr(int64(12))},
	{Type: "resource", Resource: &EmbeddedResource{URI: "file:///w/a.go", MimeType: "text/x-go", Text: ptr("package a\n")}},
	{Type: "resource", Resource: &EmbeddedResource{URI: "file:///w/a.bin", Blob: ptr("AAE=")}},
}

func TestSessionUpdatesValidateAgainstSchema(t *testing.T) {
	var updates []any
	for _, kind := range []string{"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"} {
		for _, b := range allBlocks {
			updates = append(updates, ContentChunk{SessionUpdate: kind, Content: b})
		}
		updates = append(updates, ContentChunk{SessionUpdate: kind, Content: TextBlock("x"), MessageID: "m1"})
	}
	content := []ToolCallContent{
		{Type: "content", Content: ptr(TextBlock("ran"))},
		{Type: "content", Content: &allBlocks[3]},
		{Type: "diff", Path: "/w/new.go", NewText: "package n\n"}, // new file: no old text
		{Type: "diff", Path: "/w/a.go", OldText: ptr("a"), NewText: "b"},
		{Type: "diff", Path: "/w/empty.go", OldText: ptr(""), NewText: ""},
		{Type: "terminal", TerminalID: "term-1"},
	}
	locations := []ToolCallLocation{{Path: "/w/a.go"}, {Path: "/w/a.go", Line: ptr(1)}}
	updates = append(updates,
		ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "t1", Title: "Read a.go", Kind: "read", Status: "pending",
			Content: content, Locations: locations, RawInput: json.RawMessage(`{"path":"/w/a.go"}`)},
		ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "t2", Title: "Think"},
		ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "t3"}, // title still sent
		ToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "t1", Status: "in_progress"},
		ToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "t1", Status: "completed", Title: "Read a.go (3 lines)",
			Kind: "read", Content: content, Locations: locations, RawOutput: json.RawMessage(`{"lines":3}`)},
		ToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "t1", Status: "failed", Content: content[:1]},
		PlanUpdate{SessionUpdate: "plan", Entries: []PlanEntry{
			{Content: "read", Priority: "high", Status: "completed"},
			{Content: "edit", Priority: "medium", Status: "in_progress"},
			{Content: "test", Priority: "low", Status: "pending"},
		}},
		PlanUpdate{SessionUpdate: "plan", Entries: []PlanEntry{}},
		PlanUpdate{SessionUpdate: "plan"}, // nil entries: an empty plan, not null
		UsageUpdate{SessionUpdate: "usage_update", Used: 1200, Size: 200000},
		UsageUpdate{SessionUpdate: "usage_update", Used: 0, Size: 0, Cost: &Cost{Amount: 0.0125, Currency: "USD"}},
		SessionInfoUpdate{SessionUpdate: "session_info_update", Title: "Fix the parser", UpdatedAt: "2026-08-22T10:00:00Z"},
		SessionInfoUpdate{SessionUpdate: "session_info_update"},
		CurrentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: "plan"},
		ConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: sampleConfigOptions()},
		ConfigOptionUpdate{SessionUpdate: "config_option_update"},
		AvailableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: []AvailableCommand{
			{Name: "review", Description: "Review the diff"},
			{Name: "test", Description: "Run tests", Input: &CommandInput{Hint: "package pattern"}},
		}},
		AvailableCommandsUpdate{SessionUpdate: "available_commands_update"},
		ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "t4", Name: "read", Title: "Read a.go"},
		ToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "t4", Name: "read"},
		NoticeUpdate{SessionUpdate: "notice", Severity: "warning", Title: "Model request failed; retrying"},
		NoticeUpdate{SessionUpdate: "notice", Severity: "info", Title: "MCP server fs restarted", Description: "it had exited", Meta: Meta{"x.dev/k": 1}},
		CompactionUpdate{SessionUpdate: "compaction_update", CompactionID: "cmp-1", Status: "in_progress"},
		CompactionUpdate{SessionUpdate: "compaction_update", CompactionID: "cmp-1", Status: "completed", Summary: []ContentBlock{TextBlock("We fixed it.")}},
		CompactionUpdate{SessionUpdate: "compaction_update", CompactionID: "cmp-1", Status: "failed", Error: "model unavailable"},
		CompactionSummaryChunk{SessionUpdate: "compaction_summary_chunk", CompactionID: "cmp-1", Content: TextBlock("We ")},
	)
	for _, u := range updates {
		n := SessionNotification{SessionID: "sess-1", Update: u}
		checkFrame(t, "AgentNotification", "SessionNotification", "", "session/update", n)
	}
}

func sampleConfigOptions() []SessionConfigOption {
	return []SessionConfigOption{
		{ID: "model", Name: "Model", Category: "model", Type: "select", CurrentValue: "anthropic:claude",
			Options: []ConfigSelectValue{{Value: "anthropic:claude", Name: "Claude", Description: "d"}, {Value: "openai:gpt", Name: "GPT"}}},
		{ID: "thought_level", Name: "Thinking", Category: "thought_level", Type: "select", CurrentValue: "none"}, // nil options
		{ID: "multitask", Name: "Multitask", Description: "Run subtasks", Type: "boolean", CurrentValue: true},
		{ID: "_x.dev/flag", Name: "Flag", Category: "_custom", Type: "boolean", CurrentValue: false},
	}
}

func TestResponsesValidateAgainstSchema(t *testing.T) {
	modes := &SessionModeState{CurrentModeID: "default", AvailableModes: []SessionMode{
		{ID: "default", Name: "Default"}, {ID: "plan", Name: "Plan", Description: "read only"}}}
	cases := []struct {
		def    string
		result any
	}{
		{"InitializeResponse", InitializeResponse{ProtocolVersion: ProtocolVersion}},
		{"InitializeResponse", InitializeResponse{
			ProtocolVersion: ProtocolVersion,
			AgentCapabilities: AgentCapabilities{
				LoadSession:         true,
				PromptCapabilities:  PromptCapabilities{Image: true, EmbeddedContext: true},
				MCPCapabilities:     MCPCapabilities{HTTP: true, SSE: true},
				SessionCapabilities: SessionCapabilities{List: &Present{}, Delete: &Present{}, Resume: &Present{}, Close: &Present{}, AdditionalDirectories: &Present{}},
				Auth:                &AgentAuthCaps{Logout: &Present{}},
				Meta:                Meta{"corvid": map[string]any{"compat": "none"}},
			},
			AgentInfo: &Implementation{Name: "corvid", Title: "Corvid", Version: "0.1.0"},
			AuthMethods: []AuthMethod{
				{ID: "anthropic-key", Name: "Anthropic API key", Description: "Set ANTHROPIC_API_KEY"},
				{Type: "terminal", ID: "login", Name: "Log in", Args: []string{"auth", "login"}, Env: map[string]string{"A": "b"}},
			},
		}},
		{"NewSessionResponse", NewSessionResponse{SessionID: "s1"}},
		{"NewSessionResponse", NewSessionResponse{SessionID: "s1", Modes: modes, ConfigOptions: sampleConfigOptions()}},
		{"LoadSessionResponse", LoadSessionResponse{}},
		{"LoadSessionResponse", LoadSessionResponse{Modes: modes, ConfigOptions: sampleConfigOptions()}},
		{"LoadSessionResponse", LoadSessionResponse{Modes: &SessionModeState{CurrentModeID: "default"}}},
		{"PromptResponse", PromptResponse{StopReason: StopEndTurn}},
		{"PromptResponse", PromptResponse{StopReason: StopCancelled, Meta: Meta{"k": "v"}}},
		{"SetSessionConfigOptionResponse", SetSessionConfigOptionResponse{ConfigOptions: sampleConfigOptions()}},
		{"SetSessionConfigOptionResponse", SetSessionConfigOptionResponse{}},
		{"ListSessionsResponse", ListSessionsResponse{Sessions: []SessionInfo{
			{SessionID: "s1", Cwd: "/w"},
			{SessionID: "s2", Cwd: "/w", AdditionalDirectories: []string{"/x"}, Title: "t", UpdatedAt: "2026-08-22T10:00:00Z"},
		}, NextCursor: "c2"}},
		{"ListSessionsResponse", ListSessionsResponse{}},
	}
	for _, c := range cases {
		checkFrame(t, "AgentResponse", c.def, "1", "", c.result)
	}
}

func TestAgentRequestsValidateAgainstSchema(t *testing.T) {
	options := []PermissionOption{
		{OptionID: "allow_once", Name: "Allow once", Kind: "allow_once"},
		{OptionID: "allow_always", Name: "Always allow", Kind: "allow_always"},
		{OptionID: "reject_once", Name: "Reject", Kind: "reject_once"},
		{OptionID: "reject_always", Name: "Always reject", Kind: "reject_always"},
	}
	cases := []struct {
		def, method string
		params      any
	}{
		{"RequestPermissionRequest", "session/request_permission", RequestPermissionRequest{
			SessionID: "s1",
			ToolCall: ToolCallUpdate{ToolCallID: "t1", Title: "Write a.go", Kind: "edit", Status: "pending",
				Content:   []ToolCallContent{{Type: "diff", Path: "/w/a.go", NewText: "x"}},
				Locations: []ToolCallLocation{{Path: "/w/a.go"}}, RawInput: json.RawMessage(`{"path":"/w/a.go"}`)},
			Options: options,
		}},
		{"RequestPermissionRequest", "session/request_permission", RequestPermissionRequest{
			SessionID: "s1", ToolCall: ToolCallUpdate{ToolCallID: "t1"}, Options: options[:1]}},
		{"RequestPermissionRequest", "session/request_permission", RequestPermissionRequest{
			SessionID: "s1", ToolCall: ToolCallUpdate{ToolCallID: "t1"}}}, // nil options: [], not null
		{"ReadTextFileRequest", "fs/read_text_file", ReadTextFileRequest{SessionID: "s1", Path: "/w/a.go"}},
		{"ReadTextFileRequest", "fs/read_text_file", ReadTextFileRequest{SessionID: "s1", Path: "/w/a.go", Line: ptr(10), Limit: ptr(50)}},
		{"WriteTextFileRequest", "fs/write_text_file", WriteTextFileRequest{SessionID: "s1", Path: "/w/a.go", Content: ""}},
		{"WriteTextFileRequest", "fs/write_text_file", WriteTextFileRequest{SessionID: "s1", Path: "/w/a.go", Content: "package a\n"}},
		{"CreateTerminalRequest", "terminal/create", CreateTerminalRequest{SessionID: "s1", Command: "go"}},
		{"CreateTerminalRequest", "terminal/create", CreateTerminalRequest{SessionID: "s1", Command: "go", Args: []string{"test", "./..."},
			Env: []NameValue{{Name: "GOFLAGS", Value: "-count=1"}}, Cwd: "/w", OutputByteLimit: ptr(int64(1 << 20))}},
		{"TerminalOutputRequest", "terminal/output", TerminalRequest{SessionID: "s1", TerminalID: "term-1"}},
		{"WaitForTerminalExitRequest", "terminal/wait_for_exit", TerminalRequest{SessionID: "s1", TerminalID: "term-1"}},
		{"KillTerminalRequest", "terminal/kill", TerminalRequest{SessionID: "s1", TerminalID: "term-1"}},
		{"ReleaseTerminalRequest", "terminal/release", TerminalRequest{SessionID: "s1", TerminalID: "term-1"}},
		{"CreateElicitationRequest", "elicitation/create", CreateElicitationRequest{SessionID: "s1", ToolCallID: "t1", Mode: "form", Message: "Which database?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"q1":{"type":"string","title":"DB","oneOf":[{"const":"pg","title":"pg","description":"Postgres"}]},` +
				`"q2":{"type":"array","items":{"anyOf":[{"const":"a","title":"a"}]}}},"required":["q1"]}`)}},
		{"CreateElicitationRequest", "elicitation/create", CreateElicitationRequest{SessionID: "s1", Mode: "url", Message: "Log in",
			ElicitationID: "e1", URL: "https://example.com/login"}},
	}
	for _, c := range cases {
		checkFrame(t, "AgentRequest", c.def, "0", c.method, c.params)
	}
}

func TestElicitationFramesValidateAgainstSchema(t *testing.T) {
	checkFrame(t, "AgentNotification", "CompleteElicitationNotification", "", "elicitation/complete", CompleteElicitationNotification{ElicitationID: "e1"})
	for _, raw := range []string{`{"action":"accept","content":{"q1":"pg","q2":["a"],"n":3,"b":true}}`, `{"action":"decline"}`, `{"action":"cancel"}`} {
		var r CreateElicitationResponse
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		validateJSON(t, "CreateElicitationResponse", b)
	}
}

func TestErrorsValidateAgainstSchema(t *testing.T) {
	for _, e := range []*Error{
		NewError(CodeParseError, "Parse error", "the line is not valid JSON"),
		NewError(CodeInvalidRequest, "Invalid request", ""),
		MethodNotFound("session/fork"),
		InvalidParams("Unknown config value", "value x"),
		{Code: CodeInternalError, Message: "Internal error"},
		{Code: CodeRequestCancelled, Message: "Request cancelled"},
		AuthRequired("Run `corvid auth login` first."),
		ResourceNotFound("No such file", "/w/missing"),
		{Code: -32099, Message: "custom", Data: []int{1, 2}},
	} {
		env := &wireMessage{JSONRPC: "2.0", ID: json.RawMessage(`"x"`), hasID: true, Error: e}
		b, err := encodeFrame(env, nil)
		if err != nil {
			t.Fatal(err)
		}
		frame := bytes.TrimSuffix(b, []byte("\n"))
		validateJSON(t, "AgentResponse", frame)
		var f struct{ Error json.RawMessage }
		if err := json.Unmarshal(frame, &f); err != nil {
			t.Fatal(err)
		}
		validateJSON(t, "Error", f.Error)
	}
}

func TestContentBlockMarshalWritesOnlyItsVariant(t *testing.T) {
	cases := []struct {
		block ContentBlock
		want  string
	}{
		{TextBlock(""), `{"type":"text","text":""}`},
		{ContentBlock{Type: "text", Text: "t", URI: "file:///ignored", Data: "ignored"}, `{"type":"text","text":"t"}`},
		{ContentBlock{Type: "image", Data: "AA==", MimeType: "image/png", Text: "ignored"}, `{"type":"image","data":"AA==","mimeType":"image/png"}`},
		{ContentBlock{Type: "resource_link", URI: "u", Name: "n"}, `{"type":"resource_link","uri":"u","name":"n"}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.block)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: got %s (%v), want %s", c.block, b, err, c.want)
		}
	}
	for _, bad := range []ContentBlock{{Type: "resource"}, {Type: "video"}, {}} {
		if b, err := json.Marshal(bad); err == nil {
			t.Errorf("%+v marshalled to %s, want an error", bad, b)
		}
	}
	// A diff for a new file says so with an explicit null.
	b, err := json.Marshal(ToolCallContent{Type: "diff", Path: "/w/n", NewText: ""})
	if err != nil || string(b) != `{"type":"diff","path":"/w/n","oldText":null,"newText":""}` {
		t.Errorf("new-file diff: %s (%v)", b, err)
	}
}

func TestClientCapabilitiesDecodeLeniently(t *testing.T) {
	cases := []struct {
		name, in string
		want     ClientCapabilities
		boolOpts bool
	}{
		{"all set", `{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"auth":{"terminal":true},"session":{"configOptions":{"boolean":{}}},"elicitation":{"form":{}},"_meta":{"terminal_output":true}}`,
			ClientCapabilities{FS: FileSystemCapabilities{true, true}, Terminal: true, Auth: ClientAuthCapabilities{true},
				Elicitation: &ElicitationCaps{Form: &struct{}{}}, Meta: Meta{"terminal_output": true}}, true},
		{"malformed terminal keeps fs", `{"fs":{"readTextFile":true},"terminal":"yes"}`,
			ClientCapabilities{FS: FileSystemCapabilities{ReadTextFile: true}}, false},
		{"malformed fs keeps terminal", `{"fs":true,"terminal":true}`,
			ClientCapabilities{Terminal: true}, false},
		{"one malformed fs flag keeps the other", `{"fs":{"readTextFile":1,"writeTextFile":true}}`,
			ClientCapabilities{FS: FileSystemCapabilities{WriteTextFile: true}}, false},
		{"malformed auth keeps terminal", `{"auth":[],"terminal":true}`,
			ClientCapabilities{Terminal: true}, false},
		{"unknown fields ignored", `{"terminal":true,"future":{"x":1},"fs":{"readTextFile":true,"watch":true}}`,
			ClientCapabilities{Terminal: true, FS: FileSystemCapabilities{ReadTextFile: true}}, false},
		{"null is absent", `{"fs":null,"terminal":null,"auth":null,"session":null,"elicitation":null,"_meta":null}`,
			ClientCapabilities{}, false},
		{"null flags are absent", `{"fs":{"readTextFile":null},"terminal":true}`,
			ClientCapabilities{Terminal: true}, false},
		{"not an object", `"all"`, ClientCapabilities{}, false},
		{"malformed boolean option is absent", `{"session":{"configOptions":{"boolean":true}},"terminal":true}`,
			ClientCapabilities{Terminal: true}, false},
		{"malformed session keeps terminal", `{"session":5,"terminal":true}`,
			ClientCapabilities{Terminal: true}, false},
		{"malformed elicitation mode is absent", `{"elicitation":{"form":"yes","url":{}}}`,
			ClientCapabilities{Elicitation: &ElicitationCaps{URL: &struct{}{}}}, false},
	}
	notices := func(in string) (bool, bool) {
		var got ClientCapabilities
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Fatal(err)
		}
		return got.Notices(), got.Compaction()
	}
	for in, want := range map[string][2]bool{
		`{"session":{"notices":{},"compaction":{}}}`:     {true, true},
		`{"session":{"notices":{}}}`:                     {true, false},
		`{"session":{"compaction":{"x":1}}}`:             {false, true},
		`{"session":{"notices":true,"compaction":null}}`: {false, false},
		`{"session":{"configOptions":{"boolean":{}}}}`:   {false, false},
		`{"terminal":true}`:                              {false, false},
	} {
		if n, c := notices(in); n != want[0] || c != want[1] {
			t.Errorf("%s: Notices() %v, Compaction() %v; want %v", in, n, c, want)
		}
	}
	for _, c := range cases {
		var got ClientCapabilities
		if err := json.Unmarshal([]byte(c.in), &got); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.FS != c.want.FS || got.Terminal != c.want.Terminal || got.Auth != c.want.Auth {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
		if got.BooleanConfigOptions() != c.boolOpts {
			t.Errorf("%s: BooleanConfigOptions() = %v, want %v", c.name, got.BooleanConfigOptions(), c.boolOpts)
		}
		gotE, wantE := got.Elicitation, c.want.Elicitation
		if (gotE == nil) != (wantE == nil) || (gotE != nil && ((gotE.Form == nil) != (wantE.Form == nil) || (gotE.URL == nil) != (wantE.URL == nil))) {
			t.Errorf("%s: elicitation %+v, want %+v", c.name, gotE, wantE)
		}
		if len(got.Meta) != len(c.want.Meta) {
			t.Errorf("%s: _meta %v, want %v", c.name, got.Meta, c.want.Meta)
		}
	}
}

func TestInitializeRequestTellsMissingCapabilitiesFromEmpty(t *testing.T) {
	for in, wantNil := range map[string]bool{
		`{"clientInfo":{"name":"gc","version":"1"}}`:            true,
		`{"protocolVersion":1,"clientCapabilities":null}`:       true,
		`{"protocolVersion":1,"clientCapabilities":{}}`:         false,
		`{"protocolVersion":"1","clientCapabilities":"broken"}`: false,
	} {
		var r InitializeRequest
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if (r.ClientCapabilities == nil) != wantNil {
			t.Errorf("%s: clientCapabilities nil = %v, want %v", in, r.ClientCapabilities == nil, wantNil)
		}
	}
}

func TestInboundRequestsIgnoreUnknownFieldsAndNulls(t *testing.T) {
	var p PromptRequest
	in := `{"sessionId":"s","prompt":[{"type":"text","text":"hi","future":1},{"type":"resource_link","uri":"file:///a","name":"a","size":null,"title":null}],"_meta":null,"extra":{"x":[1]}}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if p.SessionID != "s" || len(p.Prompt) != 2 || p.Prompt[0].Text != "hi" || p.Prompt[1].Size != nil || p.Meta != nil {
		t.Errorf("decoded %+v", p)
	}
	for _, b := range p.Prompt {
		if err := b.Validate(); err != nil {
			t.Errorf("%+v: %v", b, err)
		}
	}
	var n NewSessionRequest
	if err := json.Unmarshal([]byte(`{"cwd":"/w","mcpServers":null,"additionalDirectories":null}`), &n); err != nil || n.Cwd != "/w" || n.MCPServers != nil {
		t.Errorf("session/new with nulls: %+v (%v)", n, err)
	}
	var perm RequestPermissionResponse
	if err := json.Unmarshal([]byte(`{"outcome":{"outcome":"selected","optionId":"allow_once","_meta":{}},"_meta":null}`), &perm); err != nil ||
		perm.Outcome.Outcome != "selected" || perm.Outcome.OptionID != "allow_once" {
		t.Errorf("permission response: %+v (%v)", perm, err)
	}
}

func TestContentBlockValidateRejectsIncompleteBlocks(t *testing.T) {
	for _, b := range []ContentBlock{
		{}, {Type: "video"}, {Type: "image", Data: "AA=="}, {Type: "audio", MimeType: "audio/wav"},
		{Type: "resource_link"}, {Type: "resource"}, {Type: "resource", Resource: &EmbeddedResource{URI: "u"}},
	} {
		if err := b.Validate(); err == nil {
			t.Errorf("%+v validated", b)
		}
	}
	for _, b := range allBlocks {
		if err := b.Validate(); err != nil {
			t.Errorf("%+v: %v", b, err)
		}
	}
}
