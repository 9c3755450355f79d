package testkit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

func TestMain(m *testing.M) { Main(m) }

// startFake starts the fake agent under a recorder.
func startFake(t *testing.T, opts Options) (*Editor, *recorder, context.Context) {
	t.Helper()
	bin := BuildPackage(t, "./internal/testkit/testdata/fakeagent")
	rec := newRecorder(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return Start(rec, bin, opts), rec, ctx
}

// say makes the fake agent write lines verbatim, and returns once they were all read
// (the _fake/say response comes after them on the same stream).
func say(t *testing.T, ctx context.Context, e *Editor, lines ...string) {
	t.Helper()
	if _, rerr := e.Call(ctx, "_fake/say", map[string]any{"lines": lines}); rerr != nil {
		t.Fatalf("_fake/say: %v", rerr)
	}
}

// agentCall makes the fake agent call the client and returns the client's response.
func agentCall(t *testing.T, ctx context.Context, e *Editor, method string, params any) Message {
	t.Helper()
	var res struct {
		Response json.RawMessage `json:"response"`
	}
	e.MustCall(ctx, "_fake/call", map[string]any{"method": method, "params": params}, &res)
	m, bad := decodeMessage(res.Response)
	if bad != "" {
		t.Fatalf("client response %s: %s", res.Response, bad)
	}
	return m
}

func TestValidTrafficFailsNothing(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	if _, rerr := e.Initialize(ctx, Zed()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := e.NewSession(ctx, t.TempDir())
	stop, rerr := e.Prompt(ctx, sid, "hi")
	if rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if got := TextOf(e.Updates(sid), "agent_message_chunk"); got != "echo: hi" {
		t.Errorf("text = %q", got)
	}
	say(t, ctx, e, `{"jsonrpc":"2.0","method":"_fake/note","params":{}}`)
	if code, _ := e.Close(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	rec.expectNone(t)
}

func TestNonJSONLineFailsTheTest(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Minimal())
	say(t, ctx, e, "hello from a stray fmt.Println", `[1,2]`, `{"jsonrpc":"1.0","method":"session/update"}`)
	rec.expectOne(t, "not a JSON-RPC 2.0 message", "not a JSON object", "hello from a stray fmt.Println")
	rec.expectOne(t, "not a JSON-RPC 2.0 message", "[1,2]")
	rec.expectOne(t, `"jsonrpc" is not "2.0"`)
	if n := len(rec.errors()); n != 3 {
		t.Errorf("got %d errors, want 3: %q", n, rec.errors())
	}
}

func TestSchemaInvalidUpdateFailsTheTest(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Minimal())
	// agent_message_chunk without content, and a tool_call_update with a bogus status.
	say(t, ctx, e,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"running"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}}}`,
	)
	msg := rec.expectOne(t, "SessionNotification", `"messageId":"m"`)
	if !strings.Contains(msg, "content") {
		t.Errorf("the error does not name the missing member: %s", msg)
	}
	rec.expectOne(t, "SessionNotification", `"status":"running"`)
	if n := len(rec.errors()); n != 2 {
		t.Errorf("got %d errors, want 2 (the valid update must pass): %q", n, rec.errors())
	}
	// Invalid updates are still recorded, so tests can see what was sent.
	if got := len(e.Updates("s")); got != 3 {
		t.Errorf("recorded %d updates, want 3", got)
	}
}

func TestSchemaInvalidResponseFailsTheTest(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Minimal())
	if _, rerr := e.Call(ctx, "session/list", map[string]any{}); rerr != nil {
		t.Fatal(rerr)
	}
	rec.expectOne(t, "result of session/list", "ListSessionsResponse")
}

func TestResponseProblemsFailTheTest(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Minimal())
	say(t, ctx, e,
		`{"jsonrpc":"2.0","id":999,"result":{}}`,                            // never sent
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`,           // initialize (id 0) answered twice
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`,               // error without message
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, // fine
		`{"jsonrpc":"2.0","method":"session/bogus","params":{}}`,            // not an agent→client notification
	)
	rec.expectOne(t, "id 999", "never sent")
	rec.expectOne(t, "twice")
	rec.expectOne(t, "does not match the ACP schema type Error")
	rec.expectOne(t, `"session/bogus"`)
	if n := len(rec.errors()); n != 4 {
		t.Errorf("got %d errors, want 4: %q", n, rec.errors())
	}
	m, err := e.NextResponse(ctx, nil)
	if err != nil || m.Error == nil || m.Error.Code != CodeParseError {
		t.Errorf("NextResponse(null) = %+v, %v", m, err)
	}
}

func TestUnadvertisedMethodFailsTheTest(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Emacs()) // fs yes, no terminal key at all
	resp := agentCall(t, ctx, e, "terminal/create", map[string]any{"sessionId": "s", "command": "true"})
	if resp.Error == nil || resp.Error.Code != CodeMethodNotFound {
		t.Errorf("response %s, want -32601", resp.Raw)
	}
	rec.expectOne(t, "agent called terminal/create but the client did not advertise terminal")

	e2, rec2, ctx := startFake(t, Options{})
	e2.Initialize(ctx, Minimal())
	resp = agentCall(t, ctx, e2, "fs/write_text_file", map[string]any{"sessionId": "s", "path": filepath.Join(t.TempDir(), "x"), "content": ""})
	if resp.Error == nil || resp.Error.Code != CodeMethodNotFound {
		t.Errorf("response %s, want -32601", resp.Raw)
	}
	rec2.expectOne(t, "agent called fs/write_text_file but the client did not advertise fs.writeTextFile")
}

func TestOldGasCityCannotBeAskedForPermission(t *testing.T) {
	e, rec, ctx := startFake(t, Options{NeverAnswer: true})
	e.Initialize(ctx, OldGasCity())
	say(t, ctx, e, `{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"a","name":"Allow","kind":"allow_once"}]}}`)
	rec.expectOne(t, "session/request_permission", "no clientCapabilities")
	if got := len(e.Requests()); got != 1 {
		t.Errorf("requests recorded = %d", got)
	}
	if !strings.Contains(e.TranscriptString(), `--> {"jsonrpc":"2.0","method":"initialized"`) {
		t.Errorf("old Gas City did not send initialized:\n%s", e.TranscriptString())
	}
}

func TestUnknownAgentMethods(t *testing.T) {
	e, rec, ctx := startFake(t, Options{Handlers: map[string]Handler{
		"_zed.dev/ping": func(context.Context, json.RawMessage) (any, *RPCError) { return map[string]any{"pong": true}, nil },
	}})
	e.Initialize(ctx, Zed())
	if r := agentCall(t, ctx, e, "_corvid/unknown", map[string]any{}); r.Error == nil || r.Error.Code != CodeMethodNotFound {
		t.Errorf("_ext: %s", r.Raw)
	}
	if r := agentCall(t, ctx, e, "_zed.dev/ping", map[string]any{}); string(r.Result) != `{"pong":true}` {
		t.Errorf("custom handler: %s", r.Raw)
	}
	rec.expectNone(t)
	if r := agentCall(t, ctx, e, "editor/explode", map[string]any{}); r.Error == nil || r.Error.Code != CodeMethodNotFound {
		t.Errorf("unknown: %s", r.Raw)
	}
	rec.expectOne(t, `"editor/explode"`, "not an ACP v1 agent→client method")
}

var permParams = map[string]any{
	"sessionId": "s1",
	"toolCall":  map[string]any{"toolCallId": "call-1", "title": "Read x", "kind": "read"},
	"options": []any{
		map[string]any{"optionId": "ao", "name": "Allow once", "kind": "allow_once"},
		map[string]any{"optionId": "aa", "name": "Always", "kind": "allow_always"},
		map[string]any{"optionId": "ro", "name": "Reject", "kind": "reject_once"},
	},
}

func outcome(t *testing.T, m Message) string {
	t.Helper()
	var r struct {
		Outcome struct{ Outcome, OptionID string }
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || m.Error != nil {
		t.Fatalf("permission response %s", m.Raw)
	}
	if err := ValidateDef("RequestPermissionResponse", m.Result); err != nil {
		t.Errorf("the kit's own answer is schema-invalid: %v", err)
	}
	return r.Outcome.Outcome + ":" + r.Outcome.OptionID
}

func TestPermissionPolicies(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    PermissionHandler
		want string
	}{
		{"default", nil, "selected:ao"},
		{"reject", RejectOnce(), "selected:ro"},
		{"always", PickKind("allow_always"), "selected:aa"},
		{"cancel", CancelPermission(), "cancelled:"},
		{"option", PickOption("nope"), "selected:nope"},
		{"delay", DelayPermission(10*time.Millisecond, RejectOnce()), "selected:ro"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, rec, ctx := startFake(t, Options{Permission: tc.h})
			e.Initialize(ctx, Zed())
			if got := outcome(t, agentCall(t, ctx, e, "session/request_permission", permParams)); got != tc.want {
				t.Errorf("outcome %s, want %s", got, tc.want)
			}
			p := e.Permissions()
			if len(p) != 1 || !p[0].Answered || p[0].Request.ToolCallID != "call-1" || len(p[0].Request.Options) != 3 {
				t.Errorf("recorded %+v", p)
			}
			rec.expectNone(t)
		})
	}
}

func TestPickKindWithoutSuchOptionFailsTheTest(t *testing.T) {
	e, rec, ctx := startFake(t, Options{Permission: PickKind("reject_always")})
	e.Initialize(ctx, Zed())
	if got := outcome(t, agentCall(t, ctx, e, "session/request_permission", permParams)); got != "cancelled:" {
		t.Errorf("outcome %s", got)
	}
	rec.expectOne(t, "no option of kind")
}

func TestHeldPermissionIsCancelledBySessionCancel(t *testing.T) {
	e, rec, ctx := startFake(t, Options{Permission: HoldPermission(nil, AllowOnce())})
	e.Initialize(ctx, NewGasCity())
	p := e.CallAsync("_fake/call", map[string]any{"method": "session/request_permission", "params": permParams})
	req, err := e.WaitPermission(ctx)
	if err != nil || req.SessionID != "s1" {
		t.Fatalf("WaitPermission: %+v %v", req, err)
	}
	if e.Permissions()[0].Answered {
		t.Fatal("answered while held")
	}
	e.Cancel("s1")
	res, rerr := p.Wait(ctx)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var r struct{ Response json.RawMessage }
	json.Unmarshal(res, &r)
	m, _ := decodeMessage(r.Response)
	if got := outcome(t, m); got != "cancelled:" {
		t.Errorf("outcome %s", got)
	}
	rec.expectNone(t)
}

func TestHeldPermissionIsReleased(t *testing.T) {
	release := make(chan struct{})
	e, _, ctx := startFake(t, Options{Permission: HoldPermission(release, RejectOnce())})
	e.Initialize(ctx, Zed())
	p := e.CallAsync("_fake/call", map[string]any{"method": "session/request_permission", "params": permParams})
	if _, err := e.WaitPermission(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	res, _ := p.Wait(ctx)
	var r struct{ Response json.RawMessage }
	json.Unmarshal(res, &r)
	m, _ := decodeMessage(r.Response)
	if got := outcome(t, m); got != "selected:ro" {
		t.Errorf("outcome %s", got)
	}
}

func TestFileSystem(t *testing.T) {
	dir := t.TempDir()
	onDisk := filepath.Join(dir, "disk.txt")
	os.WriteFile(onDisk, []byte("one\ntwo\nthree\nfour\n"), 0o644)
	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Zed())
	read := func(params map[string]any) Message {
		params["sessionId"] = "s"
		return agentCall(t, ctx, e, "fs/read_text_file", params)
	}
	content := func(m Message) string {
		var r struct{ Content string }
		json.Unmarshal(m.Result, &r)
		return r.Content
	}
	if got := content(read(map[string]any{"path": onDisk})); got != "one\ntwo\nthree\nfour\n" {
		t.Errorf("disk read %q", got)
	}
	if got := content(read(map[string]any{"path": onDisk, "line": 2, "limit": 2})); got != "two\nthree\n" {
		t.Errorf("line/limit read %q", got)
	}
	e.SetBuffer(onDisk, "unsaved")
	if got := content(read(map[string]any{"path": onDisk})); got != "unsaved" {
		t.Errorf("buffer read %q", got)
	}
	if m := read(map[string]any{"path": filepath.Join(dir, "missing")}); m.Error == nil || m.Error.Code != CodeResourceNotFound {
		t.Errorf("missing file: %s", m.Raw)
	}
	newFile := filepath.Join(dir, "sub", "new.txt")
	if m := agentCall(t, ctx, e, "fs/write_text_file", map[string]any{"sessionId": "s", "path": newFile, "content": "hello"}); m.Error != nil || string(m.Result) != "{}" {
		t.Errorf("write: %s", m.Raw)
	}
	if b, _ := os.ReadFile(newFile); string(b) != "hello" {
		t.Errorf("disk after write %q", b)
	}
	if s, ok := e.Buffer(newFile); !ok || s != "hello" {
		t.Errorf("buffer after write %q %v", s, ok)
	}
	rec.expectNone(t)
	read(map[string]any{"path": "relative.txt"})
	rec.expectOne(t, "relative path")
	calls := e.FSCalls()
	if len(calls) != 6 || calls[1].Line != 2 || calls[1].Limit != 2 || calls[4].Method != "fs/write_text_file" {
		t.Errorf("calls %+v", calls)
	}
}

func TestTerminal(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Zed())
	term := func(method string, params map[string]any) Message {
		params["sessionId"] = "s"
		m := agentCall(t, ctx, e, method, params)
		if m.Error != nil {
			t.Fatalf("%s: %s", method, m.Raw)
		}
		if def := e.sch.Def(acpkit.ClientResult, method); def != "" {
			if err := ValidateDef(def, m.Result); err != nil {
				t.Errorf("the kit's %s answer is schema-invalid: %v", method, err)
			}
		}
		return m
	}
	id := func(m Message) string {
		var r struct{ TerminalID string }
		json.Unmarshal(m.Result, &r)
		return r.TerminalID
	}

	t1 := id(term("terminal/create", map[string]any{"command": "echo hi; echo err >&2; exit 3"}))
	if got := string(term("terminal/wait_for_exit", map[string]any{"terminalId": t1}).Result); got != `{"exitCode":3,"signal":null}` {
		t.Errorf("wait_for_exit %s", got)
	}
	if got := string(term("terminal/output", map[string]any{"terminalId": t1}).Result); got != `{"exitStatus":{"exitCode":3,"signal":null},"output":"hi\nerr\n","truncated":false}` {
		t.Errorf("output %s", got)
	}
	term("terminal/release", map[string]any{"terminalId": t1})

	t2 := id(term("terminal/create", map[string]any{"command": "sh", "args": []string{"-c", "printf 'é%.0s' 1 2 3 4 5 6"}, "outputByteLimit": 5}))
	term("terminal/wait_for_exit", map[string]any{"terminalId": t2})
	var out struct {
		Output    string
		Truncated bool
	}
	json.Unmarshal(term("terminal/output", map[string]any{"terminalId": t2}).Result, &out)
	if out.Output != "éé" || !out.Truncated {
		t.Errorf("truncated output %+v", out)
	}
	term("terminal/release", map[string]any{"terminalId": t2})

	t3 := id(term("terminal/create", map[string]any{"command": "sleep", "args": []string{"30"}}))
	term("terminal/kill", map[string]any{"terminalId": t3})
	if got := string(term("terminal/wait_for_exit", map[string]any{"terminalId": t3}).Result); got != `{"exitCode":null,"signal":"SIGKILL"}` {
		t.Errorf("wait after kill %s", got)
	}
	term("terminal/release", map[string]any{"terminalId": t3})
	rec.expectNone(t)

	agentCall(t, ctx, e, "terminal/output", map[string]any{"sessionId": "s", "terminalId": t3})
	rec.expectOne(t, "released terminal")
	states := e.Terminals()
	if len(states) != 3 || !states[0].Released || !states[2].Killed || states[2].Signal == nil || states[1].Output != "éé" {
		t.Errorf("states %+v", states)
	}
	if n := len(e.TerminalCalls()); n != 13 {
		t.Errorf("terminal calls %d", n)
	}
}

func TestIDStyles(t *testing.T) {
	for style, want := range map[IDStyle]string{IDsFromZero: `"id":0,`, IDsFromOne: `"id":1,`, IDsString: `"id":"req-0",`} {
		e, rec, ctx := startFake(t, Options{IDs: style})
		e.Initialize(ctx, Minimal())
		if first := e.Transcript()[0]; first.Dir != ToAgent || !strings.Contains(first.Text, want) {
			t.Errorf("style %d: first line %s", style, first)
		}
		rec.expectNone(t)
	}
}

func TestWaitUpdateKeepsOrder(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Minimal())
	upd := func(status string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"` + status + `"}}}`
	}
	say(t, ctx, e, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"Read","kind":"read","status":"pending"}}}`,
		upd("in_progress"), upd("completed"))
	for _, want := range []string{"pending", "in_progress", "completed"} {
		u, err := e.WaitUpdate(ctx, func(u Update) bool { return u.ToolCallID == "t" })
		if err != nil || u.Status != want {
			t.Fatalf("want %s, got %+v %v", want, u, err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := e.WaitUpdate(short, func(Update) bool { return true }); err == nil {
		t.Error("WaitUpdate returned an update twice")
	}
	rec.expectNone(t)
}

func TestCloseReportsExit(t *testing.T) {
	e, _, ctx := startFake(t, Options{})
	e.Initialize(ctx, Minimal())
	code, took := e.Close()
	if code != 0 || took > 5*time.Second {
		t.Errorf("close: code %d after %v", code, took)
	}
	if !strings.Contains(e.Stderr(), "fakeagent: started") {
		t.Errorf("stderr not captured: %q", e.Stderr())
	}

	e, _, _ = startFake(t, Options{})
	e.CallAsync("_fake/exit", map[string]any{"code": 3})
	<-e.Exited()
	if code, _ := e.Close(); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}

	e, rec, ctx := startFake(t, Options{ExitTimeout: 200 * time.Millisecond})
	e.MustCall(ctx, "_fake/ignore_eof", nil, nil)
	if code, _ := e.Close(); code != -1 {
		t.Errorf("hung agent: code %d", code)
	}
	rec.expectOne(t, "did not exit within")
}

func TestEnvironmentIsIsolated(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-real")
	e, _, ctx := startFake(t, Options{Env: []string{"EXTRA=1"}})
	get := func(name string) string {
		var r struct{ Value string }
		e.MustCall(ctx, "_fake/getenv", map[string]any{"name": name}, &r)
		return r.Value
	}
	if home := get("HOME"); home != e.Home() || home == os.Getenv("HOME") {
		t.Errorf("HOME %q (editor home %q)", home, e.Home())
	}
	if got := get("XDG_DATA_HOME"); !strings.HasPrefix(got, e.Home()) {
		t.Errorf("XDG_DATA_HOME %q", got)
	}
	if got := get("ANTHROPIC_API_KEY"); got != "" {
		t.Errorf("credential leaked: %q", got)
	}
	if got := get("EXTRA"); got != "1" {
		t.Errorf("EXTRA %q", got)
	}
}

func TestHugeLineIsRead(t *testing.T) {
	e, rec, ctx := startFake(t, Options{})
	e.Initialize(ctx, Minimal())
	text := strings.Repeat("x", 3<<20)
	say(t, ctx, e, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+text+`"}}}}`)
	if got := TextOf(e.Updates("s"), "agent_message_chunk"); len(got) != len(text) {
		t.Errorf("got %d bytes", len(got))
	}
	rec.expectNone(t)
}
