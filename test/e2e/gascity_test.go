package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Gas City's ACP client, replayed frame for frame. The frames below are what its
// json.Marshal of JSONRPCMessage produces (ids from a process-wide counter starting at 1,
// params omitted when nil):
//
//   - old shape: gastownhall/gascity@a46ccb1cec71e7b0d30ef3a7cc2ca0998055eaac
//     internal/runtime/acp/protocol.go (newInitializeRequest: clientInfo only;
//     newSessionNewRequest: no params; newSessionPromptRequest: messages[{role, content}]);
//   - new shape: gastownhall/gascity@58d91930afc32357c350ac8bff6a09c6bdeef9f9
//     internal/runtime/acp/protocol.go (protocolVersion 1, clientCapabilities fs/terminal
//     true, session/new {cwd, mcpServers: []}, still messages).
//
// Both read each session/update as SessionUpdateParams{SessionID, Content []ContentBlock}
// (conn.go handleUpdate at a46ccb1c): an update whose params.content is not an array
// fails json.Unmarshal and is dropped whole; the text is every content block of type
// "text". Their dispatch answers no agent→client request (conn.go dispatch routes only
// session/update notifications and responses).
type gasCityShape struct {
	name       string
	initialize string
	newSession func(cwd string) string
}

func gasCityShapes() []gasCityShape {
	return []gasCityShape{
		{
			name:       "old",
			initialize: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"gc","version":"1.0"}}}`,
			newSession: func(string) string { return `{"jsonrpc":"2.0","id":2,"method":"session/new"}` },
		},
		{
			name:       "new",
			initialize: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"gc","version":"1.0"},"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}}`,
			newSession: func(cwd string) string {
				c, _ := json.Marshal(cwd)
				return `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + string(c) + `,"mcpServers":[]}}`
			},
		},
	}
}

// gasCityPrompt is newSessionPromptRequest's frame for one text block.
func gasCityPrompt(id int, sessionID, text string) string {
	p, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "session/prompt",
		"params": map[string]any{"sessionId": sessionID, "messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}},
		}},
	})
	return string(p)
}

// handshake replays initialize → initialized → session/new as Gas City does and returns
// the session id it would decode.
func (s *session) gasCityHandshake(t *testing.T, shape gasCityShape) string {
	t.Helper()
	s.Send(shape.initialize)
	if m, err := s.NextResponse(s.ctx, 1); err != nil || m.Error != nil {
		t.Fatalf("initialize: %v %+v", err, m.Error)
	}
	s.Send(`{"jsonrpc":"2.0","method":"initialized"}`)
	s.Send(shape.newSession(s.workspace))
	m, err := s.NextResponse(s.ctx, 2)
	if err != nil || m.Error != nil {
		t.Fatalf("session/new: %v %+v", err, m.Error)
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || res.SessionID == "" {
		t.Fatalf("session/new result %s: %v", m.Result, err)
	}
	return res.SessionID
}

// gasCityUpdate is the shape Gas City decodes session/update params into.
type gasCityUpdate struct {
	SessionID string `json:"sessionId"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// gasCityText is what `gc peek` prints after Gas City read the transcript. Its
// client keeps output as lines (conn.go at a46ccb1c): handleUpdate takes every
// block of params.content whose type is "text" and whose text is not "", splits
// the text with strings.Split(text, "\n") and appends each piece as one line
// (appendLine); peekLines joins the lines with "\n". This is that code's
// behaviour, written again here: Gas City is not a Go module this repository can
// fetch (the module proxy refuses github.com/gastownhall/gascity) and the package is
// internal to its module, so its source cannot be imported as a test helper.
// It fails the test for an update Gas City would drop.
func gasCityText(t *testing.T, s *session) string {
	t.Helper()
	var lines []string
	for _, m := range s.Notifications() {
		if m.Method != "session/update" {
			continue
		}
		var p gasCityUpdate
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Errorf("Gas City would drop this update (%v): %s", err, m.Raw)
			continue
		}
		for _, c := range p.Content {
			if c.Type != "text" || c.Text == "" {
				continue
			}
			lines = append(lines, strings.Split(c.Text, "\n")...)
		}
	}
	return strings.Join(lines, "\n")
}

// The answer streams in 7-byte chunks, so chunk ends fall inside lines: Gas City's
// peek must still show each line whole, blank lines included, with the last line
// (which ends with no newline) sent when the turn ends.
func TestGasCityShapesPromptWithMessagesAndReadTopLevelContent(t *testing.T) {
	const answer = "Hello from corvid, in pieces small enough to stream.\nA second line,\n\nafter a blank one,\nand a last line without a newline."
	for _, shape := range gasCityShapes() {
		t.Run(shape.name, func(t *testing.T) {
			s := startCorvid(t, text(answer, 7), testkit.Options{NeverAnswer: true})
			sid := s.gasCityHandshake(t, shape)
			s.Send(gasCityPrompt(3, sid, "say hello"))
			m, err := s.NextResponse(s.ctx, 3)
			if err != nil {
				t.Fatal(err)
			}
			if m.Error != nil || !strings.Contains(string(m.Result), `"end_turn"`) {
				t.Fatalf("prompt answered %s %+v, want stopReason end_turn", m.Result, m.Error)
			}
			if got := gasCityText(t, s); got != answer {
				t.Errorf("Gas City reads %q, want %q", got, answer)
			}
			// The standard update is still there, beside the content array.
			if got := testkit.TextOf(s.Updates(sid), "agent_message_chunk"); got != answer {
				t.Errorf("standard agent_message_chunk text %q, want %q", got, answer)
			}
			// The user's message content became the prompt (stored as the user turn).
			if n := len(s.Requests()); n != 0 {
				t.Errorf("corvid sent %d requests to a client that never answers: %+v", n, s.Requests())
			}
		})
	}
}

// Thoughts and tool calls are not Gas City output text: only message chunks get the array.
func TestGasCityContentOnlyOnMessageText(t *testing.T) {
	script := scriptFile(t, "think-then-read")
	s := startCorvid(t, script, testkit.Options{NeverAnswer: true})
	if err := os.WriteFile(filepath.Join(s.workspace, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := s.gasCityHandshake(t, gasCityShapes()[1])
	s.Send(gasCityPrompt(3, sid, "read a.txt"))
	if m, err := s.NextResponse(s.ctx, 3); err != nil || m.Error != nil {
		t.Fatalf("prompt: %v %+v", err, m.Error)
	}
	for _, m := range s.Notifications() {
		var p struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(m.Params, &p)
		// A message chunk's frame carries the lines it completed, and may carry
		// none (the line goes on); every other update carries none.
		if p.Content != nil && p.Update.SessionUpdate != "agent_message_chunk" {
			t.Errorf("%s: top-level content on an update that is not message text: %s", p.Update.SessionUpdate, m.Raw)
		}
	}
	if got := gasCityText(t, s); got != "done" {
		t.Errorf("Gas City reads %q, want %q", got, "done")
	}
	// The read ran in-process although this shape advertised fs: it never answers.
	if n := len(s.Requests()); n != 0 {
		t.Errorf("corvid sent %d requests (fs or permission) to a client that never answers", n)
	}
}

func TestPromptWithMessagesOrNeitherIsValidated(t *testing.T) {
	s := startCorvid(t, text("ok", 2), testkit.Options{})
	sid := s.ready(t, testkit.Minimal())
	cases := []struct {
		name, params, detail string
	}{
		{"neither", `{"sessionId":%q}`, "prompt is required"},
		{"messages not an array", `{"sessionId":%q,"messages":{"role":"user"}}`, "messages must be an array"},
		{"no user message", `{"sessionId":%q,"messages":[{"role":"assistant","content":"hi"}]}`, "no message with role"},
		{"content neither string nor blocks", `{"sessionId":%q,"messages":[{"role":"user","content":42}]}`, "messages[0].content"},
	}
	for i, tc := range cases {
		id := 100 + i
		s.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":%s}`, id, fmt.Sprintf(tc.params, sid)))
		m, err := s.NextResponse(s.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		expectError(t, tc.name, m, -32602)
		if m.Error != nil && !strings.Contains(string(m.Error.Data), tc.detail) {
			t.Errorf("%s: error data %s does not say %q", tc.name, m.Error.Data, tc.detail)
		}
	}
	// A string content is one text block.
	s.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":200,"method":"session/prompt","params":{"sessionId":%q,"messages":[{"role":"user","content":"a string prompt"}]}}`, sid))
	m, err := s.NextResponse(s.ctx, 200)
	if err != nil || m.Error != nil {
		t.Fatalf("string content: %v %+v", err, m.Error)
	}
	show := exec.Command(testkit.BuildCorvid(t), "sessions", "show", sid)
	show.Env = s.Env()
	out, err := show.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "a string prompt") {
		t.Errorf("stored session does not hold the string prompt (%v):\n%s", err, out)
	}
}

// The out-of-band permission question reaches Gas City as top-level content, and
// `corvid respond` answers it within the same turn.
func TestGasCityReadsThePermissionQuestion(t *testing.T) {
	for _, shape := range gasCityShapes() {
		t.Run(shape.name, func(t *testing.T) {
			s := startCorvid(t, toolScript("write", map[string]any{"path": "notes.txt", "content": "x"}), testkit.Options{NeverAnswer: true})
			sid := s.gasCityHandshake(t, shape)
			s.Send(gasCityPrompt(3, sid, "write notes"))
			question := regexp.MustCompile(`corvid respond (q\w+) allow`)
			if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
				return question.MatchString(u.Content.Text)
			}); err != nil {
				t.Fatalf("no question: %v", err)
			}
			id := question.FindStringSubmatch(gasCityText(t, s))
			if id == nil {
				t.Fatalf("Gas City cannot read the question; it reads:\n%s", gasCityText(t, s))
			}
			cmd := exec.Command(testkit.BuildCorvid(t), "respond", id[1], "allow")
			cmd.Env = s.Env()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("corvid respond: %v\n%s", err, out)
			}
			m, err := s.NextResponse(s.ctx, 3)
			if err != nil || m.Error != nil || !strings.Contains(string(m.Result), "end_turn") {
				t.Fatalf("prompt: %v %s %+v", err, m.Result, m.Error)
			}
			if b, err := os.ReadFile(filepath.Join(s.workspace, "notes.txt")); err != nil || string(b) != "x" {
				t.Errorf("notes.txt = %q, %v; want written in-process after allow", b, err)
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("corvid sent %d requests to a client that never answers", n)
			}
		})
	}
}

// Gas City's Interrupt is syscall.Kill(-pid, SIGINT) on the agent's process group
// (gastownhall/gascity@a46ccb1c internal/runtime/acp/acp.go, Provider.Interrupt). It
// must cancel the running turn and leave corvid serving; two SIGINTs in a row exit.
func TestSIGINTCancelsTurnsAndKeepsServing(t *testing.T) {
	script := scriptFile(t, "slow-then-second")
	s := startCorvid(t, script, testkit.Options{NeverAnswer: true})
	sid := s.gasCityHandshake(t, gasCityShapes()[0])
	s.Send(gasCityPrompt(3, sid, "talk slowly"))
	if _, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-s.PID(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	m, err := s.NextResponse(s.ctx, 3)
	if err != nil || m.Error != nil || !strings.Contains(string(m.Result), `"cancelled"`) {
		t.Fatalf("after SIGINT the prompt answered %s %+v %v, want stopReason cancelled", m.Result, m.Error, err)
	}
	s.Send(gasCityPrompt(4, sid, "again"))
	m, err = s.NextResponse(s.ctx, 4)
	if err != nil || m.Error != nil || !strings.Contains(string(m.Result), `"end_turn"`) {
		t.Fatalf("prompt after SIGINT: %s %+v %v", m.Result, m.Error, err)
	}
	select {
	case <-s.Exited():
		t.Fatal("corvid exited after one SIGINT")
	default:
	}
	_ = syscall.Kill(s.PID(), syscall.SIGINT)
	_ = syscall.Kill(s.PID(), syscall.SIGINT)
	select {
	case <-s.Exited():
	case <-s.ctx.Done():
		t.Fatal("corvid still running after two SIGINTs in a row")
	}
}

func TestSIGTERMExits(t *testing.T) {
	s := startCorvid(t, text("x", 1), testkit.Options{NeverAnswer: true})
	s.gasCityHandshake(t, gasCityShapes()[1])
	if err := syscall.Kill(s.PID(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
		if c := s.ExitCode(); c != 0 {
			t.Errorf("exit code %d after SIGTERM, want 0", c)
		}
	case <-s.ctx.Done():
		t.Fatal("corvid still running after SIGTERM")
	}
}

// A tool call ends the line before it: the text streamed before a tool call reaches
// Gas City whole, before the tool call's own frame, and the standard updates still
// carry every chunk as it came.
func TestGasCityGetsTheLineBeforeAToolCallWhole(t *testing.T) {
	script := map[string]any{"responses": []any{
		map[string]any{"chunkSize": 3, "parts": []any{
			map[string]any{"type": "text", "text": "Reading a.txt\nfirst, then"},
			map[string]any{"type": "tool_call", "name": "read", "input": map[string]any{"path": "a.txt"}},
		}},
		map[string]any{"chunkSize": 3, "parts": []any{map[string]any{"type": "text", "text": "It says alpha."}}},
	}}
	s := startCorvid(t, script, testkit.Options{NeverAnswer: true}, "--yolo")
	if err := os.WriteFile(filepath.Join(s.workspace, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := s.gasCityHandshake(t, gasCityShapes()[1])
	s.Send(gasCityPrompt(3, sid, "read a.txt"))
	if m, err := s.NextResponse(s.ctx, 3); err != nil || m.Error != nil {
		t.Fatalf("prompt: %v %+v", err, m.Error)
	}
	if got, want := gasCityText(t, s), "Reading a.txt\nfirst, then\nIt says alpha."; got != want {
		t.Errorf("gc peek shows %q, want %q", got, want)
	}
	if got, want := testkit.TextOf(s.Updates(sid), "agent_message_chunk"), "Reading a.txt\nfirst, thenIt says alpha."; got != want {
		t.Errorf("the standard updates carry %q, want every chunk: %q", got, want)
	}
	// "first, then" is sent before the tool call's frame.
	sawLine := false
	for _, m := range s.Notifications() {
		var p struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Update.SessionUpdate == "tool_call" {
			if !sawLine {
				t.Errorf("the tool call's frame came before the line streamed before it")
			}
			break
		}
		sawLine = sawLine || strings.Contains(string(m.Params), `"content":[{"type":"text","text":"first, then"}]`)
	}
}

// Gas City's own client, built from its source: with CORVID_GASCITY_SRC naming a
// checkout of github.com/gastownhall/gascity, the helper in testdata/gascitypeek is
// compiled into that module with `go build -overlay` (its ACP client is an internal
// package, and its module is not on the Go module proxy, so neither importing nor
// fetching it is possible here; nothing of it is copied into this repository) and
// drives corvid as `gc` does: Start, Nudge, Peek. gc peek must show the streamed
// answer line by line. Without the variable the test is skipped.
func TestGasCityOwnClientPeeksWholeLines(t *testing.T) {
	src := os.Getenv("CORVID_GASCITY_SRC")
	if src == "" {
		t.Skip("set CORVID_GASCITY_SRC to a checkout of github.com/gastownhall/gascity to run Gas City's own client")
	}
	helper, err := filepath.Abs(filepath.Join("testdata", "gascitypeek", "main.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(src, "cmd", "corvidgascitypeek", "main.go"): helper}})
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "gascitypeek")
	build := exec.Command("go", "build", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", bin, "./cmd/corvidgascitypeek")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build Gas City's client: %v\n%s", err, out)
	}
	const answer = "Hello from the scripted model.\nA second line,\n\nafter a blank one,\nand a last line."
	script := testkit.WriteScript(t, map[string]any{"responses": []any{
		map[string]any{"chunkSize": 7, "parts": []any{map[string]any{"type": "text", "text": answer}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "second turn"}}},
	}})
	ws, home := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin, filepath.Join(tmp, "sock"), ws, "say hello",
		testkit.BuildCorvid(t)+" acp -m script:"+script)
	cmd.Env = testkit.IsolatedEnvAt(home, "CORVID_KEYRING=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("Gas City's client: %v\n%s", err, out)
	}
	var peek string
	if err := json.Unmarshal(out, &peek); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	if peek != answer && !strings.HasPrefix(peek, answer+"\n") {
		t.Errorf("gc peek shows %q, want the answer's lines whole: %q", peek, answer)
	}
}
