package mcpreal

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// The everything server's echo over each transport: offered to the model,
// run through the permission gate, its answer back to the model; its
// instructions reach the system prompt, named by server.
func TestEchoOverEveryTransport(t *testing.T) {
	r := start(t, startOpts{})
	for _, kind := range []string{"stdio", "http", "sse"} {
		t.Run(kind, func(t *testing.T) {
			r.t = t
			sid := r.newSession(r.transports()[kind]("everything"))
			res := r.callTool(sid, "everything__echo", `{"message":"over `+kind+`"}`)
			if res.IsError || !strings.Contains(res.ResultText(), "Echo: over "+kind) {
				t.Errorf("echo result = %s", res.Content)
			}
			reqs := r.api.Requests()
			sys := reqs[len(reqs)-1].SystemText()
			if !strings.Contains(sys, `## MCP server "everything"`) {
				t.Errorf("the server's instructions are not in the system prompt:\n%.2000s", sys)
			}
		})
	}
}

// A PNG read through the filesystem server reaches the model once, as an
// image: never as base64 text (the server also sends it as structured
// content).
func TestImageIsNotFloodedAsText(t *testing.T) {
	r := start(t, startOpts{})
	png := bigPNG(t)
	if err := os.WriteFile(filepath.Join(r.dir, "pic.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	sid := r.newSession(stdio("fs", r.srv.node, r.srv.filesystem, r.dir))
	res := r.callTool(sid, "fs__read_media_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(r.dir, "pic.png")))
	var text, images int
	for _, b := range res.ResultBlocks() {
		switch b.Type {
		case "text":
			text += len(b.Text)
		case "image":
			images++
			if b.Source == nil || b.Source.Data != base64.StdEncoding.EncodeToString(png) {
				t.Errorf("the image block is not the file")
			}
		}
	}
	if images != 1 || text > 300 {
		t.Errorf("the model got %d images and %d characters of text, want 1 image and a short note", images, text)
	}
	// The structured content (the same image again) is not added: the
	// model reads one short note beside the image.
	if texts := res.ResultText(); strings.Contains(texts, "mimeType") || strings.Contains(texts, "{") {
		t.Errorf("the model got the structured content too: %.300q", texts)
	}
	// The tool card shows the image, not a JSON dump of it.
	for _, u := range testkit.OfKind(r.Updates(sid), "tool_call_update") {
		for _, c := range u.ToolContent {
			if c.Content.Type == "text" && (len(c.Content.Text) > 1000 || strings.Contains(c.Content.Text, "```json")) {
				t.Errorf("the tool card has a %d-character text block: %.200q", len(c.Content.Text), c.Content.Text)
			}
		}
	}
}

// bigPNG is a valid 64 KB-ish PNG (a stored, uncompressed image).
func bigPNG(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pic.png"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A stdio server that dies while idle is reported to the user and
// restarted; its tools work again.
func TestIdleCrashIsReportedAndRestarted(t *testing.T) {
	r := start(t, startOpts{})
	sid := r.newSession(r.everythingStdio("everything"))
	r.waitCommand(sid, "everything:simple-prompt")
	pids := r.serverPIDs()
	if len(pids) == 0 {
		t.Fatal("no server process found")
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	r.waitText(sid, `[corvid] MCP server "everything" stopped (signal: killed); corvid restarts it in 1s (attempt 1 of 5).`, 30*time.Second)
	r.waitText(sid, `[corvid] MCP server "everything" is running again (`, 90*time.Second)
	res := r.callTool(sid, "everything__echo", `{"message":"back again"}`)
	if res.IsError || !strings.Contains(res.ResultText(), "Echo: back again") {
		t.Errorf("echo after the restart = %s", res.Content)
	}
}

// A call that hits a crash says so in its tool card.
func TestCrashDuringACallIsInTheToolCard(t *testing.T) {
	r := start(t, startOpts{})
	sid := r.newSession(r.everythingStdio("everything"))
	r.waitCommand(sid, "everything:simple-prompt")
	// The long-running operation gives time to kill the server mid-call.
	r.api.Enqueue(
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_1", "everything__trigger-long-running-operation", `{"duration":30,"steps":30}`)}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}},
	)
	p := r.CallAsync("session/prompt", testkit.TextPrompt(sid, "go"))
	if _, err := r.WaitUpdate(r.ctx, func(u testkit.Update) bool {
		return u.SessionID == sid && u.SessionUpdate == "tool_call_update" && u.Status == "in_progress"
	}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range r.serverPIDs() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if _, rerr := p.Wait(r.ctx); rerr != nil {
		t.Fatal(rerr)
	}
	var card string
	for _, u := range testkit.OfKind(r.Updates(sid), "tool_call_update") {
		if u.Status == "failed" {
			for _, c := range u.ToolContent {
				card += c.Content.Text
			}
		}
	}
	if !strings.Contains(card, `MCP server "everything" stopped during the call to "trigger-long-running-operation" (signal: killed); corvid is restarting it`) {
		t.Errorf("failed tool card = %q", card)
	}
	r.waitText(sid, `MCP server "everything" is running again`, 90*time.Second)
}

// A banner on stdout before the real server speaks is skipped.
func TestBannerOnStdoutIsSkipped(t *testing.T) {
	r := start(t, startOpts{})
	script := fmt.Sprintf(`echo "Everything server, starting up (not JSON-RPC)"; exec %q %q stdio`, r.srv.node, r.srv.everything)
	sid := r.newSession(stdio("everything", "sh", "-c", script))
	res := r.callTool(sid, "everything__echo", `{"message":"after a banner"}`)
	if res.IsError || !strings.Contains(res.ResultText(), "Echo: after a banner") {
		t.Errorf("echo = %s\n%s", res.Content, r.Stderr())
	}
	if !strings.Contains(r.Stderr(), "not JSON-RPC; skipped") {
		t.Errorf("the banner was not logged")
	}
}

// startup_timeout from config bounds a server's start; a slow server does
// not hold the session up and joins later, with a notice.
func TestStartupTimeoutAndLateJoin(t *testing.T) {
	srv := need(t)
	slow := fmt.Sprintf(`sleep 7; exec %q %q stdio`, srv.node, srv.everything)
	r := start(t, startOpts{config: fmt.Sprintf(`
[mcp_servers.strict]
command = "sh"
args = ["-c", %q]
startup_timeout = "500ms"

[mcp_servers.slow]
command = "sh"
args = ["-c", %q]
`, slow, slow)})
	begin := time.Now()
	sid := r.newSession()
	if d := time.Since(begin); d > 6500*time.Millisecond {
		t.Errorf("session/new took %s with a server that needs 7s", d)
	}
	r.waitText(sid, `[corvid] MCP server "strict" failed to start: no answer within 500ms (set startup_timeout to allow longer)`, 30*time.Second)
	r.waitText(sid, `[corvid] MCP server "slow" is ready (`, 90*time.Second)
	r.waitCommand(sid, "slow:simple-prompt")
	res := r.callTool(sid, "slow__echo", `{"message":"late but here"}`)
	if !strings.Contains(res.ResultText(), "Echo: late but here") {
		t.Errorf("echo = %s", res.Content)
	}
}

// session/new answers before a real server has even started (its launch
// is held back until the test creates a gate file, which it does only once
// session/new answered); the session's first prompt waits for the server,
// so that prompt's call to one of its tools works.
func TestSessionAnswersBeforeTheServerAndTheFirstPromptWaits(t *testing.T) {
	r := start(t, startOpts{})
	d := t.TempDir()
	gate, launched := filepath.Join(d, "gate"), filepath.Join(d, "launched")
	held := fmt.Sprintf(`while [ ! -e %q ]; do sleep 0.02; done; touch %q; exec %q %q stdio`, gate, launched, r.srv.node, r.srv.everything)
	sid := r.newSession(stdio("everything", "sh", "-c", held))
	if _, err := os.Stat(launched); err == nil {
		t.Fatal("the server was launched before session/new answered, though it was held back")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := r.callToolOnce(sid, "everything__echo", `{"message":"first prompt"}`)
	if res.IsError || !strings.Contains(res.ResultText(), "Echo: first prompt") {
		t.Errorf("the first prompt's echo = %s", res.Content)
	}
}

// stdin EOF and SIGTERM both leave no server process (nor a child of one)
// running once corvid has exited.
func TestShutdownLeavesNoServerProcess(t *testing.T) {
	for _, how := range []string{"eof", "sigterm"} {
		t.Run(how, func(t *testing.T) {
			r := start(t, startOpts{})
			// One server with a helper child in its group; one that
			// ignores stdin EOF and SIGTERM.
			withChild := fmt.Sprintf(`sleep 300 & exec %q %q stdio`, r.srv.node, r.srv.everything)
			stubborn := fmt.Sprintf(`trap "" TERM; %q %q stdio; sleep 300`, r.srv.node, r.srv.everything)
			sid := r.newSession(stdio("child", "sh", "-c", withChild), stdio("stubborn", "sh", "-c", stubborn), r.everythingStdio("plain"))
			r.waitCommand(sid, "plain:simple-prompt")
			r.waitCommand(sid, "stubborn:simple-prompt")
			r.waitCommand(sid, "child:simple-prompt")
			before := r.serverPIDs()
			if len(before) < 5 {
				t.Fatalf("server processes %v, want at least 5", before)
			}
			if how == "eof" {
				r.Close()
			} else {
				_ = syscall.Kill(r.PID(), syscall.SIGTERM)
				<-r.Exited()
			}
			if left := r.serverPIDs(); len(left) > 0 {
				t.Errorf("after corvid exited, %d of %d server processes still run: %v", len(left), len(before), left)
			}
		})
	}
}

// Progress from the everything server's long-running operation reaches the
// tool card before the call ends.
func TestProgressReachesTheToolCard(t *testing.T) {
	r := start(t, startOpts{})
	for _, kind := range []string{"stdio", "http", "sse"} {
		t.Run(kind, func(t *testing.T) {
			r.t = t
			sid := r.newSession(r.transports()[kind]("everything"))
			res := r.callTool(sid, "everything__trigger-long-running-operation", `{"duration":2,"steps":4}`)
			if !strings.Contains(res.ResultText(), "Long running operation completed") {
				t.Fatalf("result = %s", res.Content)
			}
			var seen []string
			for _, u := range testkit.OfKind(r.Updates(sid), "tool_call_update") {
				if u.Status != "" && u.Status != "in_progress" {
					continue
				}
				for _, c := range u.ToolContent {
					if strings.Contains(c.Content.Text, "%") {
						seen = append(seen, c.Content.Text)
					}
				}
			}
			// The last notification may race the result (HTTP delivers them
			// on separate streams); the ones before it must show.
			if len(seen) < 2 || !slices.Contains(seen, "25% (1 of 4)") || !slices.Contains(seen, "50% (2 of 4)") {
				t.Errorf("progress in the tool card: %q", seen)
			}
		})
	}
}

// An HTTP or SSE server down when the session starts is retried; its tools
// join once it is up.
func TestRemoteServerDownAtStartIsRetried(t *testing.T) {
	r := start(t, startOpts{})
	for _, kind := range []string{"http", "sse"} {
		t.Run(kind, func(t *testing.T) {
			r.t = t
			port := freePort(t)
			path, mode := "/mcp", "streamableHttp"
			if kind == "sse" {
				path, mode = "/sse", "sse"
			}
			sid := r.newSession(map[string]any{"type": kind, "name": "later", "url": fmt.Sprintf("http://127.0.0.1:%d%s", port, path), "headers": []any{}})
			r.waitText(sid, `[corvid] MCP server "later" failed to start: cannot connect to`, 30*time.Second)
			r.waitText(sid, "corvid keeps retrying in the background", time.Second)
			r.serveEverything(mode, port)
			r.waitText(sid, `[corvid] MCP server "later" is running again (`, 90*time.Second)
			res := r.callTool(sid, "later__echo", `{"message":"up now"}`)
			if !strings.Contains(res.ResultText(), "Echo: up now") {
				t.Errorf("echo = %s", res.Content)
			}
		})
	}
}

// Plan mode runs a tool that declares readOnlyHint (after asking) and
// refuses one that does not.
func TestPlanModeRunsReadOnlyTools(t *testing.T) {
	r := start(t, startOpts{})
	sid := r.newSession(r.everythingStdio("everything"))
	r.MustCall(r.ctx, "session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	res := r.callTool(sid, "everything__echo", `{"message":"planning"}`)
	if res.IsError || !strings.Contains(res.ResultText(), "Echo: planning") {
		t.Errorf("read-only echo in plan mode = %s", res.Content)
	}
	res = r.callTool(sid, "everything__toggle-simulated-logging", `{}`)
	if !res.IsError || !strings.Contains(res.ResultText(), "plan mode") {
		t.Errorf("a tool that may change things ran in plan mode: %s", res.Content)
	}
}

// A server name that is not a typable command gets a sanitised command
// name, and the command works.
func TestCommandNamesAreSanitised(t *testing.T) {
	r := start(t, startOpts{})
	sid := r.newSession(r.everythingStdio("my server.v2"))
	r.waitCommand(sid, "my_server_v2:simple-prompt")
	r.prompt(sid, "/my_server_v2:simple-prompt", fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}})
	reqs := r.api.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Raw), "This is a simple prompt without arguments.") {
		t.Errorf("the prompt was not expanded: %s", reqs[len(reqs)-1].Raw)
	}
}

// Roots: the filesystem server started without directories learns the
// session's cwd from corvid's roots; the everything server lists them.
func TestRootsAreTheSessionsDirectories(t *testing.T) {
	r := start(t, startOpts{})
	if err := os.WriteFile(filepath.Join(r.dir, "hello.txt"), []byte("hi from the workspace"), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := r.newSession(stdio("fs", r.srv.node, r.srv.filesystem), r.everythingStdio("everything"))
	dir, _ := filepath.EvalSymlinks(r.dir)
	// The server asks corvid for the roots after its initialize and takes
	// them when the answer comes, on its own time: a first call on a busy
	// machine can come before, and list none (seen in CI). So ask until
	// the list holds the cwd, for a few seconds.
	var res fakeanthropic.ContentBlock
	for deadline := time.Now().Add(10 * time.Second); ; {
		res = r.callTool(sid, "fs__list_allowed_directories", `{}`)
		if strings.Contains(res.ResultText(), dir) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(res.ResultText(), dir) {
		t.Errorf("allowed directories = %s, want the session's cwd %s", res.ResultText(), dir)
	}
	res = r.callTool(sid, "fs__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "hello.txt")))
	if !strings.Contains(res.ResultText(), "hi from the workspace") {
		t.Errorf("read through the roots = %s", res.Content)
	}
	res = r.callTool(sid, "everything__get-roots-list", `{}`)
	if !strings.Contains(res.ResultText(), "file://"+dir) {
		t.Errorf("everything's roots = %s", res.ResultText())
	}
}

// Resources of the everything server: listed (with templates) and read
// through mcp_resource; a resource_link a tool returned is readable the
// same way.
func TestResourcesAndResourceLinks(t *testing.T) {
	r := start(t, startOpts{})
	sid := r.newSession(r.everythingStdio("everything"))
	list := r.callTool(sid, "mcp_resource", `{"server":"everything"}`).ResultText()
	if !strings.Contains(list, "demo://resource/static/document/") || !strings.Contains(list, "demo://resource/dynamic/text/{resourceId}") {
		t.Errorf("list = %.1500s", list)
	}
	links := r.callTool(sid, "everything__get-resource-links", `{"count":2}`).ResultText()
	if !strings.Contains(links, "Resource link: Text Resource 2 <demo://resource/dynamic/text/2>") || !strings.Contains(links, `read a resource link with the mcp_resource tool, server "everything"`) {
		t.Errorf("links = %s", links)
	}
	read := r.callTool(sid, "mcp_resource", `{"server":"everything","uri":"demo://resource/dynamic/text/2"}`)
	if read.IsError || !strings.Contains(read.ResultText(), "Resource demo://resource/dynamic/text/2:") {
		t.Errorf("read = %s", read.Content)
	}
	blob := r.callTool(sid, "mcp_resource", `{"server":"everything","uri":"demo://resource/dynamic/blob/1"}`)
	if !strings.Contains(blob.ResultText(), "bytes of binary data, not shown]") {
		t.Errorf("blob = %s", blob.Content)
	}
}

// Sampling: the everything server asks corvid's model; the user is asked
// first (server, prompt, token limit shown), the model answers, the cost
// is counted. Declined, the server hears so.
func TestSamplingAsksTheUserThenTheModel(t *testing.T) {
	for _, allow := range []bool{true, false} {
		t.Run(map[bool]string{true: "allowed", false: "declined"}[allow], func(t *testing.T) {
			perm := func(ctx context.Context, req testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
				if strings.Contains(req.Title, "asks the model") && !allow {
					return testkit.RejectOnce()(ctx, req)
				}
				return testkit.AllowOnce()(ctx, req)
			}
			r := start(t, startOpts{permission: perm})
			sid := r.newSession(r.everythingStdio("everything"))
			r.waitCommand(sid, "everything:simple-prompt") // its tools are there
			responses := []fakeanthropic.Response{
				{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_s", "everything__trigger-sampling-request", `{"prompt":"say hi","maxTokens":50}`)}},
			}
			if allow {
				responses = append(responses, fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("Hi from the sampled model")},
					Usage: fakeanthropic.Usage{InputTokens: 100000, OutputTokens: 10000}})
			}
			responses = append(responses, fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("done")}})
			r.prompt(sid, "sample", responses...)

			var asked *testkit.PermissionCall
			for _, p := range r.Permissions() {
				if strings.Contains(p.Request.Title, "asks the model") {
					asked = &p
				}
			}
			if asked == nil {
				t.Fatal("the user was not asked before sampling")
			}
			shown := string(asked.Request.ToolCall)
			for _, want := range []string{"everything asks the model (up to 50 tokens)", "You are a helpful test server.", "Resource trigger-sampling-request context: say hi"} {
				if !strings.Contains(shown, want) {
					t.Errorf("the question lacks %q: %s", want, shown)
				}
			}
			reqs := r.api.Requests()
			last := reqs[len(reqs)-1].Body.Messages
			result := ""
			for _, b := range last[len(last)-1].Content {
				if b.Type == "tool_result" {
					result = b.ResultText()
				}
			}
			if !allow {
				if len(reqs) != 2 || !strings.Contains(result, "declined") {
					t.Errorf("declined: %d model requests, tool result %q", len(reqs), result)
				}
				return
			}
			if len(reqs) != 3 {
				t.Fatalf("%d model requests, want 3", len(reqs))
			}
			sampled := reqs[1]
			if sampled.SystemText() != "You are a helpful test server." || sampled.Body.MaxTokens != 50 || len(sampled.Body.Tools) != 0 {
				t.Errorf("the sampling request: system %q, max_tokens %d, %d tools", sampled.SystemText(), sampled.Body.MaxTokens, len(sampled.Body.Tools))
			}
			if !strings.Contains(result, "Hi from the sampled model") {
				t.Errorf("the server did not get the model's answer: %s", result)
			}
			costs := 0
			for _, u := range testkit.OfKind(r.Updates(sid), "usage_update") {
				if strings.Contains(string(u.Raw), `"amount":0,`) || !strings.Contains(string(u.Raw), `"amount"`) {
					continue
				}
				costs++
			}
			if costs == 0 {
				t.Errorf("the sampling's usage was not counted in the session's cost")
			}
		})
	}
}

// An editor's mention of an MCP resource (a resource_link in the prompt)
// is read from the server that offers it, listed or by template.
func TestMentionedResourcesAreRead(t *testing.T) {
	r := start(t, startOpts{})
	sid := r.newSession(r.everythingStdio("everything"))
	r.waitCommand(sid, "everything:simple-prompt") // its resources are listed
	r.api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("read them")}})
	r.MustCall(r.ctx, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{
		map[string]any{"type": "text", "text": "look at these"},
		map[string]any{"type": "resource_link", "uri": "demo://resource/static/document/architecture.md", "name": "architecture.md"},
		map[string]any{"type": "resource_link", "uri": "demo://resource/dynamic/text/3", "name": "three"},
		map[string]any{"type": "resource_link", "uri": "nobody://x", "name": "x"},
	}}, nil)
	reqs := r.api.Requests()
	raw := string(reqs[len(reqs)-1].Raw)
	for _, want := range []string{
		`\u003cresource uri=\"demo://resource/static/document/architecture.md\" server=\"everything\"\u003e`,
		"# Everything Server – Architecture",
		`\u003cresource uri=\"demo://resource/dynamic/text/3\" server=\"everything\"\u003e`,
		`\u003cresource_link uri=\"nobody://x\" name=\"x\"/\u003e`,
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("the model request lacks %s:\n%.3000s", want, raw)
		}
	}
}
