package e2e

// codeMode "all" through the built binary on the fake Anthropic API: the
// model is offered one tool, run_script; the script's tool calls pass the
// permission gate and appear as their own tool calls nested under the
// script's; the script's limits and cancel.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
	fa "github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// scriptUse is a run_script tool use of the fake model.
func scriptUse(id, script string) fa.Block {
	in, _ := json.Marshal(map[string]string{"script": script})
	return fa.ToolUse(id, "run_script", string(in))
}

// codeModeSession serves corvid on api in a workspace holding files, with
// home's config, and opens a codeMode "all" session.
func codeModeSession(t *testing.T, api *fa.Server, files map[string]string, config string) (*session, string) {
	s, sid, _ := codeModeSessionAt(t, api, files, config)
	return s, sid
}

// codeModeSessionAt is codeModeSession that also returns the CORVID_HOME.
func codeModeSessionAt(t *testing.T, api *fa.Server, files map[string]string, config string) (*session, string, string) {
	t.Helper()
	workspace, home := t.TempDir(), t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(workspace, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if config != "" {
		_ = os.MkdirAll(filepath.Join(home, "config"), 0o755)
		if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := startOnAPI(t, api, "claude-sonnet-4-6", workspace, home)
	var res ctlSetup
	s.MustCall(s.ctx, "session/new", map[string]any{"cwd": workspace, "mcpServers": []any{},
		"_meta": map[string]any{"codebuddy.ai/codeMode": "all"}}, &res)
	return s, res.SessionID, home
}

// parentOf is a tool_call's _meta parent id ("" for none).
func parentOf(raw json.RawMessage) string {
	var u struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(raw, &u)
	p, _ := u.Meta["corvid.dev/parentToolCallId"].(string)
	return p
}

// lastResult is the text of the tool_result for id in the model's last request.
func lastResult(t *testing.T, api *fa.Server, id string) (string, bool) {
	t.Helper()
	reqs := api.Requests()
	msgs := reqs[len(reqs)-1].Body.Messages
	for _, b := range msgs[len(msgs)-1].Content {
		if b.Type == "tool_result" && b.ToolUseID == id {
			return b.ResultText(), b.IsError
		}
	}
	t.Fatalf("the last request has no tool_result for %s", id)
	return "", false
}

func TestCodeModeAllRunsToolsAsNestedGatedCallsOfOneScript(t *testing.T) {
	api := fa.New(t)
	script := "for f in ['a.txt', 'b.txt']:\n  print(read(path=f))\nwrite('c.txt', 'gamma')\n'done'"
	api.Enqueue(fa.Response{Blocks: []fa.Block{scriptUse("toolu_s1", script)}}, fa.Response{Blocks: []fa.Block{fa.Text("finished")}})
	s, sid, home := codeModeSessionAt(t, api, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"}, "")
	ups := s.turn(t, sid, "read a and b, write c", "end_turn")

	// The model saw one tool, whose description lists the others.
	reqs := api.Requests()
	var names []string
	for _, tl := range reqs[0].Body.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"run_script"}) {
		t.Fatalf("tools offered %v, want [run_script]", names)
	}
	if d := reqs[0].Body.Tools[0].Description; !strings.Contains(d, "`read(path, ") || !strings.Contains(d, "`write(path, content") {
		t.Errorf("run_script's description does not list read and write as functions:\n%s", d)
	}
	// The result is what the script printed, then its last expression.
	text, isErr := lastResult(t, api, "toolu_s1")
	if isErr || !strings.Contains(text, "alpha") || !strings.Contains(text, "beta") || !strings.HasSuffix(text, "done") {
		t.Errorf("script result (error %v):\n%s\nwant both files' text, then done", isErr, text)
	}
	if b, _ := os.ReadFile(filepath.Join(s.workspace, "c.txt")); string(b) != "gamma" {
		t.Errorf("c.txt holds %q, want the script's write", b)
	}

	// The editor saw the script's call, three nested calls after it, each
	// completed, and the script's own completion after theirs.
	calls := testkit.OfKind(ups, "tool_call")
	if len(calls) != 4 {
		t.Fatalf("%d tool_call updates, want the script's and three nested", len(calls))
	}
	scriptID := calls[0].ToolCallID
	if parentOf(calls[0].Raw) != "" || calls[0].Title != "Run script" {
		t.Errorf("first tool_call %s: want the script's, with no parent", calls[0].Raw)
	}
	var nestedKinds []string
	for _, c := range calls[1:] {
		if parentOf(c.Raw) != scriptID {
			t.Errorf("nested tool_call %s: _meta parent %q, want %q", c.Raw, parentOf(c.Raw), scriptID)
		}
		nestedKinds = append(nestedKinds, c.Kind)
	}
	if !slices.Equal(nestedKinds, []string{"read", "read", "edit"}) {
		t.Errorf("nested kinds %v, want [read read edit]", nestedKinds)
	}
	var scriptDone, lastNestedDone int
	for _, u := range testkit.OfKind(ups, "tool_call_update") {
		if u.Status != "completed" {
			continue
		}
		if u.ToolCallID == scriptID {
			scriptDone = u.Seq
		} else {
			lastNestedDone = max(lastNestedDone, u.Seq)
		}
	}
	if scriptDone == 0 || lastNestedDone == 0 || scriptDone < lastNestedDone {
		t.Errorf("script completed at %d, nested calls last at %d: want the script to complete after them", scriptDone, lastNestedDone)
	}
	// The write went through the gate: the editor was asked, about the nested call.
	perms := s.Permissions()
	if len(perms) != 1 || parentOf(perms[0].Request.ToolCall) != scriptID || perms[0].Request.Kind != "edit" {
		t.Errorf("permission requests %+v, want one for the nested write under %s", perms, scriptID)
	}

	// session/load in a new process replays the nesting.
	s.Close()
	b := startOnAPI(t, api, "claude-sonnet-4-6", s.workspace, home)
	b.MustCall(b.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": s.workspace, "mcpServers": []any{}}, nil)
	var replayed []string
	for _, c := range testkit.OfKind(b.Updates(sid), "tool_call") {
		replayed = append(replayed, c.ToolCallID+"<"+parentOf(c.Raw))
	}
	var live []string
	for _, c := range calls {
		live = append(live, c.ToolCallID+"<"+parentOf(c.Raw))
	}
	if !slices.Equal(replayed, live) {
		t.Errorf("replayed tool calls (id<parent) %v, want %v as they were live", replayed, live)
	}
}

func TestCodeModeScriptCallsObeyThePermissionMode(t *testing.T) {
	api := fa.New(t)
	api.Enqueue(fa.Response{Blocks: []fa.Block{scriptUse("toolu_s1", "print(read('a.txt'))\nwrite('a.txt', 'clobbered')\nprint('not reached')")}},
		fa.Response{Blocks: []fa.Block{fa.Text("ok")}})
	s, sid := codeModeSession(t, api, map[string]string{"a.txt": "alpha\n"}, "")
	if _, rerr := s.setOption(t, sid, "mode", "plan"); rerr != nil {
		t.Fatal(rerr)
	}
	s.turn(t, sid, "try to write", "end_turn")
	text, isErr := lastResult(t, api, "toolu_s1")
	if !isErr || !strings.Contains(text, "alpha") || !strings.Contains(text, "permission denied") || strings.Contains(text, "not reached") {
		t.Errorf("script result (error %v):\n%s\nwant the read's output, then the refused write stopping the script", isErr, text)
	}
	if b, _ := os.ReadFile(filepath.Join(s.workspace, "a.txt")); string(b) != "alpha\n" {
		t.Errorf("a.txt is %q after a refused write", b)
	}
}

func TestCodeModeScriptLimitsAreClearErrors(t *testing.T) {
	api := fa.New(t)
	api.Enqueue(
		fa.Response{Blocks: []fa.Block{scriptUse("toolu_steps", "while True:\n  pass")}},
		fa.Response{Blocks: []fa.Block{scriptUse("toolu_out", "while True:\n  print('spam spam spam')")}},
		fa.Response{Blocks: []fa.Block{fa.Text("done")}},
	)
	s, sid := codeModeSession(t, api, nil, "[code_mode]\nmax_steps = 20000\nmax_output_bytes = 500\n")
	s.turn(t, sid, "loop", "end_turn")
	reqs := api.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	for _, c := range []struct{ id, want string }{
		{"toolu_steps", "steps limit reached (20000 execution steps)"},
		{"toolu_out", "output limit reached (500 bytes)"},
	} {
		text, isErr := resultIn(reqs, c.id)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%s result (error %v): %q, want an error containing %q", c.id, isErr, text, c.want)
		}
	}
}

// resultIn finds the tool_result for id in any of reqs.
func resultIn(reqs []fa.Request, id string) (string, bool) {
	for _, r := range reqs {
		for _, m := range r.Body.Messages {
			for _, b := range m.Content {
				if b.Type == "tool_result" && b.ToolUseID == id {
					return b.ResultText(), b.IsError
				}
			}
		}
	}
	return "", false
}

func TestCancelStopsARunningScript(t *testing.T) {
	api := fa.New(t)
	api.Enqueue(fa.Response{Blocks: []fa.Block{scriptUse("toolu_s1", "read('a.txt')\nwhile True:\n  pass")}})
	// No step limit to speak of: only the cancel can end this script.
	s, sid := codeModeSession(t, api, map[string]string{"a.txt": "alpha\n"}, "[code_mode]\nmax_steps = 1000000000000000\ntimeout = \"1h\"\n")
	type answer struct {
		stop string
		err  *testkit.RPCError
	}
	done := make(chan answer, 1)
	go func() {
		stop, rerr := s.Prompt(s.ctx, sid, "spin")
		done <- answer{stop, rerr}
	}()
	// The nested read completed: the script is in its endless loop now.
	if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		return u.SessionID == sid && u.SessionUpdate == "tool_call_update" && u.Status == "completed"
	}); err != nil {
		t.Fatalf("the script's read never completed: %v", err)
	}
	s.Cancel(sid)
	a := <-done
	if a.err != nil || a.stop != "cancelled" {
		t.Fatalf("prompt answered %q %v, want cancelled", a.stop, a.err)
	}
	ups := s.Updates(sid)
	scriptID := testkit.OfKind(ups, "tool_call")[0].ToolCallID
	final := ""
	for _, u := range testkit.OfKind(ups, "tool_call_update") {
		if u.ToolCallID == scriptID && u.Status != "" {
			final = u.Status
		}
	}
	if final != "failed" {
		t.Errorf("the script's tool call ended %q, want failed", final)
	}
}

func TestCodeModeTimeLimitStopsANestedShellCommand(t *testing.T) {
	api := fa.New(t)
	api.Enqueue(fa.Response{Blocks: []fa.Block{scriptUse("toolu_s1", "print('start')\nshell(command='sleep 60')\nprint('not reached')")}},
		fa.Response{Blocks: []fa.Block{fa.Text("ok")}})
	s, sid := codeModeSession(t, api, nil, "[code_mode]\ntimeout = \"1s\"\n")
	ups := s.turn(t, sid, "sleep", "end_turn")
	text, isErr := lastResult(t, api, "toolu_s1")
	if !isErr || !strings.HasPrefix(text, "start\n") || !strings.Contains(text, "time limit reached (1s)") || strings.Contains(text, "not reached") {
		t.Errorf("script result (error %v): %q, want the printed start and the time limit", isErr, text)
	}
	// The nested shell call failed saying why, not as a user cancel.
	calls := testkit.OfKind(ups, "tool_call")
	if len(calls) != 2 {
		t.Fatalf("%d tool calls, want the script's and the shell's", len(calls))
	}
	var why string
	for _, u := range testkit.OfKind(ups, "tool_call_update") {
		if u.ToolCallID == calls[1].ToolCallID && u.Status == "failed" {
			why = string(u.Raw)
		}
	}
	if !strings.Contains(why, "time limit reached") {
		t.Errorf("the shell call's failure %s does not name the time limit", why)
	}
}

func TestCodeModeScriptsCallMCPToolsAsFunctions(t *testing.T) {
	r := startMCP(t)
	var res ctlSetup
	r.MustCall(r.ctx, "session/new", map[string]any{"cwd": r.dir, "mcpServers": []any{r.stdio("local")},
		"_meta": map[string]any{"codebuddy.ai/codeMode": "all"}}, &res)
	sid := res.SessionID
	r.api.Enqueue(
		fa.Response{Blocks: []fa.Block{scriptUse("toolu_s1", "local__echo(text='hello from a script')")}},
		fa.Response{Blocks: []fa.Block{fa.Text("done")}},
	)
	if stop, rerr := r.Prompt(r.ctx, sid, "echo"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if d := r.api.Requests()[0].Body.Tools[0].Description; !strings.Contains(d, "`local__echo(") {
		t.Errorf("run_script's description does not list the MCP tool local__echo:\n%s", d)
	}
	text, isErr := lastResult(t, r.api, "toolu_s1")
	if isErr || !strings.Contains(text, "hello from a script") {
		t.Errorf("script result (error %v): %q, want the MCP tool's echo", isErr, text)
	}
	calls := testkit.OfKind(r.Updates(sid), "tool_call")
	if len(calls) != 2 || parentOf(calls[1].Raw) != calls[0].ToolCallID {
		t.Errorf("tool calls %v: want the script's and the MCP call nested under it", calls)
	}
}
