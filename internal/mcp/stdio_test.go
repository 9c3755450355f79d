package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/corvid-agent/corvid/internal/testkit"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/tool"
)

func TestStdioToolsAreListedWithNamespacedNames(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local.fs")}, Options{})
	names := toolNames(m)
	for _, want := range []string{"local_fs__echo", "local_fs__crash", "local_fs__rich", "local_fs__add_tool"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	echo := findTool(t, m, "local_fs__echo")
	if got := tool.PermissionName(echo); got != "mcp:local.fs/echo" {
		t.Errorf("PermissionName = %q", got)
	}
	if echo.Description() != "Echo the text." {
		t.Errorf("Description = %q", echo.Description())
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(echo.InputSchema(), &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil {
		t.Errorf("InputSchema = %s (%v)", echo.InputSchema(), err)
	}
	pv := echo.Describe(&tool.Env{}, json.RawMessage(`{"text":"x"}`))
	if pv.Title != "local.fs: echo" || pv.Access != tool.AccessExecute || pv.Kind != tool.KindOther {
		t.Errorf("Describe = %+v", pv)
	}
	if pv := findTool(t, m, "local_fs__rich").Describe(&tool.Env{}, nil); pv.Kind != tool.KindRead || pv.Access != tool.AccessExecute {
		t.Errorf("a read-only tool: Describe = %+v, want kind read that still asks", pv)
	}
}

func TestStdioCallReturnsTheServersResult(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local")}, Options{})
	res := run(t, findTool(t, m, "local__echo"), `{"text":"hello there"}`)
	if res.IsError || res.Output != "hello there" {
		t.Fatalf("echo = %+v", res)
	}
	if len(res.Content) != 1 || res.Content[0].Type != tool.ContentText || res.Content[0].Text != "hello there" {
		t.Errorf("echo content = %+v", res.Content)
	}
}

func TestStdioResultContentKinds(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local")}, Options{})

	res := run(t, findTool(t, m, "local__rich"), `{}`)
	for _, want := range []string{"some text", "[image: image/png", "Resource file:///notes.txt:\nthe notes"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("rich output %q lacks %q", res.Output, want)
		}
	}
	if len(res.Images) != 1 || res.Images[0].MimeType != "image/png" || len(res.Images[0].Data) == 0 {
		t.Errorf("rich images = %+v", res.Images)
	}
	var sawImage bool
	for _, c := range res.Content {
		sawImage = sawImage || (c.Type == tool.ContentImage && c.MimeType == "image/png")
	}
	if !sawImage {
		t.Errorf("rich content has no image: %+v", res.Content)
	}

	res = run(t, findTool(t, m, "local__structured"), `{}`)
	var got struct {
		Count int    `json:"count"`
		Label string `json:"label"`
	}
	if err := json.Unmarshal([]byte(res.Output), &got); err != nil || got.Count != 3 || got.Label != "three" {
		t.Errorf("structured output %q (%v)", res.Output, err)
	}

	res = run(t, findTool(t, m, "local__fail"), `{}`)
	if !res.IsError || res.Output != "it went wrong" {
		t.Errorf("fail = %+v", res)
	}

	res = run(t, findTool(t, m, "local__echo"), `[1,2]`)
	if !res.IsError || !strings.Contains(res.Output, "JSON object") {
		t.Errorf("bad input = %+v", res)
	}
}

func TestStdioServerGetsItsEnvironmentAndStderrIsLogged(t *testing.T) {
	t.Parallel()
	rec := &logRecorder{}
	s := stdioServer("local")
	s.Env = []KV{{"MCP_TEST_VAR", "from corvid"}}
	m := startOK(t, []Server{s}, Options{Logger: slog.New(rec)})
	if res := run(t, findTool(t, m, "local__env"), `{}`); res.Output != "from corvid" {
		t.Errorf("env = %+v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !rec.has("stdioserver: ready") {
		if time.Now().After(deadline) {
			t.Fatalf("stderr line not logged; log: %q", rec.lines)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !rec.has("server=local") {
		t.Errorf("stderr log does not name the server: %q", rec.lines)
	}
}

func TestPromptExpandsWithItsArgument(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local")}, Options{})
	prompts := m.Prompts()
	if len(prompts) != 1 {
		t.Fatalf("prompts = %+v", prompts)
	}
	p := prompts[0]
	if p.Server != "local" || p.Name != "greet" || p.Description != "Greet someone." ||
		len(p.Arguments) != 1 || p.Arguments[0] != (PromptArg{Name: "name", Description: "who", Required: true}) {
		t.Errorf("prompt = %+v", p)
	}
	text, err := m.GetPrompt(context.Background(), "local", "greet", map[string]string{"name": "Ada"})
	if err != nil || text != "Please greet Ada warmly." {
		t.Errorf("GetPrompt = %q, %v", text, err)
	}
	if _, err := m.GetPrompt(context.Background(), "local", "nope", nil); err == nil || !strings.Contains(err.Error(), `MCP server "local"`) {
		t.Errorf("unknown prompt: %v", err)
	}
	if _, err := m.GetPrompt(context.Background(), "other", "greet", nil); err == nil {
		t.Errorf("unknown server: no error")
	}
}

func TestBadCommandFailsAloneAndTheOthersWork(t *testing.T) {
	t.Parallel()
	m, failures := start(t, []Server{
		{Name: "github", Command: "nope-no-such-command"},
		stdioServer("local"),
		stdioServer("broken", "-fail"),
		{Name: "noname-type", Type: "acp"},
	}, Options{})
	if len(failures) != 3 {
		t.Fatalf("failures = %+v", failures)
	}
	want := `MCP server "github" failed to start: exec: "nope-no-such-command": executable file not found in $PATH`
	if failures[0].Server != "github" || failures[0].Err.Error() != want {
		t.Errorf("failure = %q, want %q", failures[0].Err, want)
	}
	if got := failures[1].Err.Error(); failures[1].Server != "broken" ||
		!strings.HasPrefix(got, `MCP server "broken" failed to start: it exited (exit status 1)`) ||
		!strings.Contains(got, "bad configuration") {
		t.Errorf("failure of a server that exits = %q", got)
	}
	if got := failures[2].Err.Error(); !strings.Contains(got, `transport type "acp" is not supported`) {
		t.Errorf("failure of an acp server = %q", got)
	}
	if res := run(t, findTool(t, m, "local__echo"), `{"text":"still here"}`); res.Output != "still here" {
		t.Errorf("echo = %+v", res)
	}
	if len(m.Tools()) == 0 || strings.Contains(strings.Join(toolNames(m), " "), "github") {
		t.Errorf("tools = %v", toolNames(m))
	}
}

func TestServerThatNeverAnswersTimesOutAndIsKilled(t *testing.T) {
	t.Parallel()
	rec := &logRecorder{}
	begin := time.Now()
	_, failures := start(t, []Server{stdioServer("slow", "-hang")}, Options{StartTimeout: 300 * time.Millisecond, Logger: slog.New(rec)})
	if len(failures) != 1 || failures[0].Err.Error() != `MCP server "slow" failed to start: no answer within 300ms (set startup_timeout to allow longer)` {
		t.Fatalf("failures = %+v", failures)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Start took %s", d)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		pids := processesWithArgs(serverBin, "-hang")
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server that never answered still runs: %v", pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processesWithArgs lists running (not zombie) processes whose command
// line is exactly args.
func processesWithArgs(args ...string) []int {
	want := strings.Join(args, "\x00") + "\x00"
	return testkit.FindProcesses(func(pid int) bool {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		return err == nil && string(b) == want
	})
}

func TestAToolTheServerDoesNotKnowIsRefused(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local")}, Options{})
	ghost := newTool(m.conn("local"), &toolDef{Name: "ghost"}, "local__ghost")
	res := run(t, ghost, `{}`)
	if !res.IsError || !strings.HasPrefix(res.Output, `MCP server "local" refused the call to "ghost": `) {
		t.Errorf("ghost = %+v", res)
	}
	if res := run(t, findTool(t, m, "local__echo"), `{"text":"fine"}`); res.Output != "fine" {
		t.Errorf("echo after a refusal = %+v", res)
	}
}

func TestCrashMidSessionIsAFailedToolResult(t *testing.T) {
	t.Parallel()
	changed := newSignal()
	m := startOK(t, []Server{stdioServer("local")}, Options{OnChange: changed.fire})
	echo := findTool(t, m, "local__echo")

	res := run(t, findTool(t, m, "local__crash"), `{}`)
	if !res.IsError || !strings.Contains(res.Output, `MCP server "local" stopped during the call to "crash"`) {
		t.Errorf("crash = %+v", res)
	}
	if !strings.Contains(res.Output, "exit status 3") {
		t.Errorf("crash result does not say how the server ended: %q", res.Output)
	}
	res = run(t, echo, `{"text":"anyone?"}`)
	if !res.IsError || !strings.Contains(res.Output, `MCP server "local" is not running`) {
		t.Errorf("call after the crash = %+v", res)
	}
	changed.wait(t, "OnChange after the crash")
	if len(m.Tools()) != 0 || len(m.Prompts()) != 0 {
		t.Errorf("a dead server still offers tools %v", toolNames(m))
	}
	if _, err := m.GetPrompt(context.Background(), "local", "greet", map[string]string{"name": "x"}); err == nil {
		t.Errorf("GetPrompt on a dead server: no error")
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestToolListChangedFiresOnChange(t *testing.T) {
	t.Parallel()
	changed := newSignal()
	m := startOK(t, []Server{stdioServer("local")}, Options{OnChange: changed.fire})
	if res := run(t, findTool(t, m, "local__add_tool"), `{"name":"late"}`); res.Output != "added late" {
		t.Fatalf("add_tool = %+v", res)
	}
	changed.wait(t, "OnChange after tools/list_changed")
	if res := run(t, findTool(t, m, "local__late"), `{}`); res.Output != "I am late" {
		t.Errorf("late = %+v", res)
	}
}

func TestCancellationReturnsTheContextError(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("local")}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := findTool(t, m, "local__wait").Run(ctx, &tool.Env{}, tool.Call{Input: json.RawMessage(`{}`)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	// The session survives a cancelled call.
	if res := run(t, findTool(t, m, "local__echo"), `{"text":"after"}`); res.Output != "after" {
		t.Errorf("echo after cancel = %+v", res)
	}
}

func TestCloseLeavesNoProcessOfTheGroup(t *testing.T) {
	t.Parallel()
	m := startOK(t, []Server{stdioServer("a"), stdioServer("b", "-linger")}, Options{StopTimeout: 200 * time.Millisecond})
	pids := m.PIDs()
	if len(pids) != 2 {
		t.Fatalf("PIDs = %v", pids)
	}
	res := run(t, findTool(t, m, "a__spawn"), `{}`)
	child, err := strconv.Atoi(res.Output)
	if err != nil {
		t.Fatalf("spawn = %+v", res)
	}
	res = run(t, findTool(t, m, "b__spawn"), `{}`)
	child2, err := strconv.Atoi(res.Output)
	if err != nil {
		t.Fatalf("spawn = %+v", res)
	}
	begin := time.Now()
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("Close took %s", d)
	}
	for _, pid := range append(pids, child, child2) {
		testkit.WaitGone(t, "an MCP server process", pid)
	}
	res = run(t, findTool2(m, "a__echo"), `{"text":"x"}`)
	if !res.IsError {
		t.Errorf("a call after Close = %+v", res)
	}
}

// findTool2 finds a tool even after Close, from a list taken before.
func findTool2(m *Manager, name string) tool.Tool {
	for _, c := range m.conns {
		for _, d := range c.tools {
			if tl := newTool(c, d, c.srv.Name+"__"+d.Name); tl.Name() == name {
				return tl
			}
		}
	}
	return nil
}
